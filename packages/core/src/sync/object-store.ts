/**
 * Git objects written by this process (docs/decisions.md, "The board branch
 * grows with the change"): a sync writes a handful of objects a change (a
 * task's blob, its shard's tree, the `tasks` and root trees) and a claim
 * three (its blob, tree and commit), and a git process to store them cost
 * more than the objects themselves. So a small batch is written loose here,
 * as git writes it (`type size\0body`, zlib-deflated, at `objects/xx/yyyy`,
 * through a temp file renamed into place); a large one (the first sync of a
 * big board) goes into one pack through `git index-pack --stdin`, one git
 * process instead of a loose file each. Keeping the loose objects packed is
 * keepPacked's (pack-upkeep.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { TasksError } from '../errors.js';
import { git, lastLine, objectId, out } from './git-objects.js';

export type ObjectType = 'blob' | 'tree' | 'commit';

/** An object to store: its type and body (its id is objectId's). */
export interface NewObject {
  type: ObjectType;
  body: Buffer;
}

/** From this many objects a batch goes into a pack (git's own transfer.unpackLimit: fewer arrive loose). */
export const PACK_FROM = 100;

/** The object folder of each repository this process wrote to (it does not move while a process runs). */
const objectDirs = new Map<string, string>();

/**
 * Records a repository's object folder and object format, learned with other
 * facts of it (sync-memory.ts, repositoryOf). Ids are SHA-1 here (objectId):
 * an object written under one into a SHA-256 repository would be lost, so
 * such a repository is refused, as `hash-object` refused it before.
 */
export function knowObjectsDir(cwd: string, dir: string, format: string): void {
  if (format !== 'sha1')
    throw new TasksError('E_GIT', `this repository's object format is ${format}; tasks sync works with SHA-1 repositories only`, { format });
  objectDirs.set(cwd, dir);
}

/** The repository's object folder, as git names it (a linked worktree's is its main repository's; GIT_OBJECT_DIRECTORY too). */
export function objectsDir(cwd: string): string {
  let dir = objectDirs.get(cwd);
  if (dir === undefined) {
    const [objects, format] = out(git(cwd, ['rev-parse', '--path-format=absolute', '--git-path', 'objects', '--show-object-format'])).split('\n');
    knowObjectsDir(cwd, objects, format);
    dir = objects;
  }
  return dir;
}

/**
 * Stores objects in the repository of `cwd`: loose, written here, or in one
 * pack when there are PACK_FROM or more. Returns their ids, in order.
 */
export function storeObjects(cwd: string, objects: NewObject[]): string[] {
  const ids = objects.map((o) => objectId(o.type, o.body));
  if (objects.length >= PACK_FROM) writePack(cwd, objects, ids);
  else if (objects.length) {
    const dir = objectsDir(cwd);
    objects.forEach((o, i) => writeLoose(dir, ids[i], o));
  }
  return ids;
}

/**
 * zlib at level 1, as git writes loose objects (core.looseCompression). Its
 * output buffer sized to the input: with zlib's default of 16 kB a call, the
 * objects of a first sync of 100,000 tasks held 1.6 GB of buffers, which the
 * process kept (and every git it started after that cost a fork of them).
 */
function deflate(data: Buffer): Buffer {
  return deflateSync(data, { level: 1, chunkSize: Math.max(64, data.length + 64) });
}

/** One loose object, unless the repository has it loose already (a packed copy is left to the next repack to fold). */
function writeLoose(dir: string, id: string, object: NewObject): void {
  const folder = join(dir, id.slice(0, 2));
  const path = join(folder, id.slice(2));
  if (statSync(path, { throwIfNoEntry: false })) return;
  // Read-only, as git leaves them.
  const data = deflate(Buffer.concat([Buffer.from(`${object.type} ${object.body.length}\0`), object.body]));
  mkdirSync(folder, { recursive: true });
  const temp = join(folder, `tmp_obj_dotasks_${process.pid}_${randomBytes(4).toString('hex')}`);
  try {
    writeFileSync(temp, data, { mode: 0o444 });
    renameSync(temp, path);
  } finally {
    rmSync(temp, { force: true });
  }
}

const PACK_TYPES: Record<ObjectType, number> = { commit: 1, tree: 2, blob: 3 };

/** A pack entry's header: its type and size, seven bits a byte after the first four. */
function entryHeader(type: ObjectType, size: number): Buffer {
  const bytes: number[] = [];
  let byte = (PACK_TYPES[type] << 4) | (size & 0x0f);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    bytes.push(byte | 0x80);
    byte = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  bytes.push(byte);
  return Buffer.from(bytes);
}

/** Objects in one pack (no deltas), which `git index-pack --stdin` checks, indexes and puts in place. */
function writePack(cwd: string, objects: NewObject[], ids: string[]): void {
  const head = Buffer.alloc(12);
  head.write('PACK', 0, 'latin1');
  head.writeUInt32BE(2, 4);
  head.writeUInt32BE(objects.length, 8);
  const parts: Buffer[] = [head];
  for (const o of objects) parts.push(entryHeader(o.type, o.body.length), deflate(o.body));
  const body = Buffer.concat(parts);
  const sum = createHash('sha1').update(body).digest();
  // Named as git names packs (by their checksum), in the object folder: index-pack run in a subfolder of the work
  // tree (the board's) would otherwise make a `.git/objects/pack` of its own there.
  const path = join(objectsDir(cwd), 'pack', `pack-${sum.toString('hex')}.pack`);
  mkdirSync(dirname(path), { recursive: true });
  const r = git(cwd, ['index-pack', '--stdin', path], { input: Buffer.concat([body, sum]), allowFail: true });
  if (r.status !== 0) throw new TasksError('E_GIT', `git index-pack failed: ${lastLine(r)}`, { stderr: r.stderr, objects: ids.length });
}
