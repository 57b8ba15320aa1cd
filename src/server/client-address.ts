import net from 'node:net';

/**
 * The address of the client behind a request. A proxy in front (nginx, deploy/nginx.conf) is the
 * TCP peer of every request, so the client is said in `X-Forwarded-For` (each proxy appends the
 * peer it saw) or `X-Real-IP`; anyone can write either, so they are believed only from the peers
 * listed in `server.trustProxy`. The client is the rightmost address of the chain (the forwarded
 * addresses, then the peer) that is not a trusted proxy: an address a client wrote to the left of
 * it is never reached.
 */
export class ClientAddresses {
  private readonly trusted = new net.BlockList();
  private readonly any: boolean;

  /** `trustProxy`: addresses and CIDRs (IPv4 or IPv6), as `trustProxyEntry` accepts them. */
  constructor(trustProxy: readonly string[] = []) {
    for (const entry of trustProxy) {
      const [addr, bits] = entry.split('/') as [string, string | undefined];
      const type = net.isIPv6(addr) ? 'ipv6' : 'ipv4';
      if (bits === undefined) this.trusted.addAddress(addr, type);
      else this.trusted.addSubnet(addr, Number(bits), type);
    }
    this.any = trustProxy.length > 0;
  }

  /** Whether `addr` (an IP address in text) is one of the trusted proxies. */
  isTrusted(addr: string): boolean {
    if (!this.any) return false;
    const v4 = mappedV4(addr);
    if (v4 !== undefined) return this.trusted.check(v4, 'ipv4');
    const type = net.isIP(addr);
    return type !== 0 && this.trusted.check(addr, type === 6 ? 'ipv6' : 'ipv4');
  }

  /**
   * The client of a request from `peer` carrying `forwardedFor` / `realIp` (undefined: absent).
   * An entry of the chain that is not an IP address ends the walk at the hop to its right.
   */
  resolve(peer: string, forwardedFor: string | undefined, realIp: string | undefined): string {
    const client = mappedV4(peer) ?? peer;
    if (!this.isTrusted(client)) return client;
    if (forwardedFor !== undefined) {
      const hops = forwardedFor.split(',');
      let last = client;
      for (let i = hops.length - 1; i >= 0; i--) {
        const hop = hops[i]!.trim();
        if (net.isIP(hop) === 0) return last;
        last = mappedV4(hop) ?? hop;
        if (!this.isTrusted(last)) return last;
      }
      return last;
    }
    const real = realIp?.trim();
    return real !== undefined && net.isIP(real) !== 0 ? (mappedV4(real) ?? real) : client;
  }
}

/** `::ffff:a.b.c.d` (or uWS's long form of it) as `a.b.c.d`; undefined for any other address. */
function mappedV4(addr: string): string | undefined {
  if (net.isIPv4(addr)) return addr;
  const lower = addr.toLowerCase();
  if (lower.startsWith('::ffff:') && net.isIPv4(lower.slice(7))) return lower.slice(7);
  // uWS writes IPv6 in full: 0000:0000:0000:0000:0000:ffff:7f00:0001.
  const m = /^(?:0{1,4}:){5}ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!m) return undefined;
  const hi = parseInt(m[1]!, 16);
  const lo = parseInt(m[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** Whether `entry` is an address or CIDR that `ClientAddresses` takes (for the config's zod check). */
export function trustProxyEntry(entry: string): boolean {
  const parts = entry.split('/');
  if (parts.length > 2) return false;
  const type = net.isIP(parts[0]!);
  if (type === 0) return false;
  if (parts.length === 1) return true;
  const bits = parts[1]!;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (type === 6 ? 128 : 32);
}
