import { describe, expect, it } from 'vitest';
import { hostname } from 'node:os';
import { allowedHostName, createHostCheck, parseAuthority } from './host-names.js';

describe('the Host check', () => {
  it('reads a Host as a browser reads the authority of a URL', () => {
    expect(parseAuthority('LocalHost:8080')).toEqual({ name: 'localhost', port: '8080' });
    expect(parseAuthority('[0:0:0:0:0:0:0:1]:8080')).toEqual({ name: '[::1]', port: '8080' });
    expect(parseAuthority('127.0.0.1:80')).toEqual({ name: '127.0.0.1', port: '' });
    for (const bad of ['', 'a b:1', 'user@localhost:1', 'localhost:1/x', 'localhost:1?x', 'localhost:99999', 'localhost:1,evil.example:1'])
      expect(parseAuthority(bad), bad).toBeUndefined();
  });

  it('a Host without a port means port 80', () => {
    const check = createHostCheck('127.0.0.1', 80);
    expect(['localhost', 'localhost:80', '127.0.0.1'].map((h) => check.accepts(h))).toEqual([true, true, true]);
    expect(createHostCheck('127.0.0.1', 8080).accepts('localhost')).toBe(false);
  });

  it('on an address of its own: that address and the host name, not loopback', () => {
    const check = createHostCheck('192.0.2.7', 8080, ['board.lan']);
    expect(check.names().sort()).toEqual(['192.0.2.7', 'board.lan', hostname().toLowerCase()].sort());
    expect(check.accepts('localhost:8080')).toBe(false);
  });

  it('on ::, loopback and the machine, not the wildcard itself', () => {
    const check = createHostCheck('::', 8080);
    expect(check.accepts('[::1]:8080')).toBe(true);
    expect(check.accepts(`${hostname()}:8080`)).toBe(true);
    expect(check.accepts('[::]:8080')).toBe(false);
    expect(createHostCheck('0.0.0.0', 8080).accepts('0.0.0.0:8080')).toBe(false);
  });

  it('--allow-host names an IPv6 address bare or in brackets', () => {
    expect(allowedHostName('FD00::2')).toBe('[fd00::2]');
    expect(allowedHostName('[fd00::2]')).toBe('[fd00::2]');
    expect(() => allowedHostName('[fd00::2]:80')).toThrow('without a port');
  });
});
