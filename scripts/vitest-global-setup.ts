import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statfsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The least free space in /dev/shm for the suite's temporary folders to go there (its boards, clones and remotes peak near 1 GiB). */
const TMPFS_MIN_FREE = 4 * 1024 ** 3;

/**
 * The suite's temporary folders go to a folder of its own in /dev/shm when
 * the machine has one with room, unless TMPDIR is set: the tests make and
 * remove tens of thousands of small files, and on ext4 the kernel's inode
 * allocation cost a third of the run's system time (docs/decisions.md, "The
 * suite's time"). The tests' processes inherit the variable; the folder is
 * removed when the run ends, and one left by a run that was killed (its pid
 * is in its name) when the next run starts: it holds memory, not disk.
 */
function useTmpfs(): (() => void) | undefined {
  if (process.env.TMPDIR) return undefined;
  try {
    for (const name of readdirSync('/dev/shm')) {
      const pid = /^dotasks-tests-(\d+)-/.exec(name)?.[1];
      if (pid && !alive(Number(pid))) rmSync(`/dev/shm/${name}`, { recursive: true, force: true });
    }
    const fs = statfsSync('/dev/shm');
    if (fs.bavail * fs.bsize < TMPFS_MIN_FREE) return undefined;
    const dir = mkdtempSync(`/dev/shm/dotasks-tests-${process.pid}-`);
    process.env.TMPDIR = dir;
    return () => rmSync(dir, { recursive: true, force: true });
  } catch {
    return undefined; // no /dev/shm, or not writable: the system's temporary folder
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Builds every package with tsc, the page of `tasks serve` with vite and the
 * everyday commands' bundle with rolldown, so tests can spawn the real `tasks` bin.
 */
export default function setup(): (() => void) | undefined {
  const root = fileURLToPath(new URL('..', import.meta.url));
  execFileSync(process.execPath, [fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url)), '-b'], {
    cwd: root,
    stdio: 'inherit',
  });
  // Skips itself when the page's sources did not change since the last build.
  execFileSync(process.execPath, [fileURLToPath(new URL('../packages/web/scripts/build-page.mjs', import.meta.url))], { cwd: root, stdio: 'inherit' });
  execFileSync(process.execPath, [fileURLToPath(new URL('../packages/cli/scripts/build-bundle.mjs', import.meta.url)), '--quiet'], {
    cwd: root,
    stdio: 'inherit',
  });
  return useTmpfs();
}
