import { hostname, networkInterfaces } from 'node:os';
import { isIP } from 'node:net';
import { TasksError } from '@dotasks/core/internal';

/** The names that always reach this machine alone. */
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/** True for an address only this machine can reach. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return bare === 'localhost' || bare === '::1' || /^127\./.test(bare);
}

/** True for an address that listens on every interface (`--host 0.0.0.0`, `--host ::`). */
export function isWildcard(host: string): boolean {
  return host === '0.0.0.0' || hostKey(host) === '[::]';
}

/**
 * `host[:port]` as a Host header carries it, read as a browser reads the
 * authority of a URL (lower case, IPv6 compressed and in brackets, `127.1` is
 * 127.0.0.1), so a name matches however it is spelled; the port is '' when
 * absent. Undefined for anything that is not a bare authority (a path, a
 * user, spaces).
 */
export function parseAuthority(value: string): { name: string; port: string } | undefined {
  if (!/^[\x21-\x7e]+$/.test(value)) return undefined;
  let url: URL;
  try {
    url = new URL(`http://${value}/`);
  } catch {
    return undefined;
  }
  if (url.username || url.password || url.pathname !== '/' || url.search || url.hash) return undefined;
  return { name: url.hostname, port: url.port };
}

/** A name or address as parseAuthority spells it (IPv6 given bare or in brackets). */
function hostKey(host: string): string | undefined {
  return parseAuthority(isIP(host) === 6 ? `[${host}]` : host)?.name;
}

/** The name `--allow-host` was given, as the Host check compares it; a usage error for a port, a pattern or a URL. */
export function allowedHostName(value: string): string {
  const parsed = value.includes('*') ? undefined : parseAuthority(isIP(value) === 6 ? `[${value}]` : value);
  if (!parsed || parsed.name === '') throw new TasksError('E_USAGE', `--allow-host takes one host name or address (like board.example.lan), got '${value}'`);
  const port = isIP(value) !== 6 && /:\d*$/.test(value); // `:80` too, which a URL drops as the default
  if (port) throw new TasksError('E_USAGE', `--allow-host takes a name without a port (the server's own port is implied), got '${value}'`);
  return parsed.name;
}

/** The machine's own name and, with `addresses`, the addresses of its interfaces, as they are now. */
function machineNames(addresses: boolean): string[] {
  const names = [hostKey(hostname())];
  if (addresses)
    for (const list of Object.values(networkInterfaces())) for (const address of list ?? []) names.push(hostKey(address.address.replace(/%.*$/, ''))); // a Host carries no zone id
  return names.filter((name): name is string => name !== undefined && name !== '');
}

/** Which Host headers a server accepts. */
export interface HostCheck {
  /** True when `header` names this server: one of its names, on its port. */
  accepts(header: string): boolean;
  /** The names it answers to now, without the port. */
  names(): string[];
}

/**
 * The Host names a server bound to `host` on `port` serves, so a page of
 * another site whose name is rebound to one of our addresses is refused.
 * On loopback: localhost, 127.0.0.1, [::1] (and the address bound). On a
 * wildcard bind: those, the machine's host name and its interfaces'
 * addresses (read again when a Host misses, so an address that came up
 * later is served). On any other address: that address and the host name.
 * `allowHosts` (`--allow-host`) adds names to each.
 */
export function createHostCheck(host: string, port: number, allowHosts: readonly string[] = []): HostCheck {
  const wildcard = isWildcard(host);
  const bound = wildcard ? [] : [hostKey(host) ?? host]; // 0.0.0.0 is no address to ask for
  const loopback = isLoopback(host) || wildcard ? LOOPBACK_NAMES : [];
  const allowed = allowHosts.map(allowedHostName);
  const read = () => new Set([...bound, ...loopback, ...(isLoopback(host) ? [] : machineNames(wildcard)), ...allowed]);
  let names = read();
  const known = (name: string) => {
    if (names.has(name)) return true;
    if (!wildcard) return false;
    names = read();
    return names.has(name);
  };
  return {
    accepts(header) {
      const parsed = parseAuthority(header);
      return parsed !== undefined && Number(parsed.port === '' ? 80 : parsed.port) === port && known(parsed.name);
    },
    names: () => [...names],
  };
}
