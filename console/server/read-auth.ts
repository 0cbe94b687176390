// Read authentication on a fastify app (issue 33): every route needs a read credential unless it is declared public
// (PUBLIC_ROUTE: the probes, the SPA's shell and assets, the session route), so a data route added later is closed
// by default. The decision is shared/read-auth.ts; this is the shell: cookies (@fastify/cookie), the peer's address
// against the trusted CIDRs, and the session route the login page posts to. The dispatcher's API (buildApi) and
// `tcab console` install it once; mountConsole refuses an app without it.
import { BlockList, isIPv4 } from 'node:net';
import fastifyCookie from '@fastify/cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CONSOLE_PATHS } from '../../shared/console.ts';
import { signSession } from '../../shared/read-auth-session.ts';
import { DEFAULT_PROXY_USER_HEADER, DEFAULT_SESSION_MAX_AGE_SECONDS, LoginRequest, SESSION_COOKIE, authoriseRead, cameOverHttps, credentialOf } from '../../shared/read-auth.ts';
import type { ReadAuthMode, ReadGrant, ReadPolicy, ReadRequest, SessionState } from '../../shared/read-auth.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** 'public': served without a read credential (probes, the SPA shell, the login route). */
    readAuth?: 'public';
  }
  interface FastifyRequest {
    /**
     * How this request was allowed to read (set on every non-public route), and whether that still holds now: a
     * stream outlives its opening request, so it asks again (a rotated token or an expired session ends it).
     */
    readAccess?: { grant: ReadGrant; holds(): boolean };
  }
}

export const PUBLIC_ROUTE = { config: { readAuth: 'public' as const } };

export interface ReadAuthOptions {
  mode: ReadAuthMode;
  /** The read token, asked per request (the Secret's file may be rotated); '' = none. */
  readToken: () => string;
  /** The write token: it grants reads too. */
  writeToken: () => string;
  /** Peers whose X-Forwarded-Proto is believed, and in proxy mode whose user header: CIDR blocks. */
  trustedCidrs?: readonly string[];
  /** The header a trusted proxy names the user in (proxy mode). */
  proxyUserHeader?: string;
  sessionMaxAgeSeconds?: number;
  /** Milliseconds since the epoch (tests move it). */
  now?: () => number;
}

const MARK = 'tcabReadAuth';

/** Whether installReadAuth ran on this app. */
export const hasReadAuth = (app: FastifyInstance): boolean => app.hasDecorator(MARK);

function trustedPeers(cidrs: readonly string[]): (address: string | undefined) => boolean {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [address, prefix] = cidr.split('/') as [string, string];
    list.addSubnet(address, Number(prefix), isIPv4(address) ? 'ipv4' : 'ipv6');
  }
  // An IPv4 peer on a dual-stack socket arrives as ::ffff:a.b.c.d; BlockList matches that against IPv4 blocks.
  return (address) => address !== undefined && cidrs.length > 0 && list.check(address, isIPv4(address) ? 'ipv4' : 'ipv6');
}

export function installReadAuth(app: FastifyInstance, options: ReadAuthOptions): void {
  if (hasReadAuth(app)) throw new Error('read authentication is already installed on this app');
  app.decorate(MARK, true);
  void app.register(fastifyCookie);
  const trusted = trustedPeers(options.trustedCidrs ?? []);
  const userHeader = (options.proxyUserHeader ?? DEFAULT_PROXY_USER_HEADER).toLowerCase();
  const maxAge = options.sessionMaxAgeSeconds ?? DEFAULT_SESSION_MAX_AGE_SECONDS;
  const now = options.now ?? Date.now;
  const policy = (): ReadPolicy => ({ mode: options.mode, readToken: options.readToken(), writeToken: options.writeToken(), nowSeconds: Math.floor(now() / 1000), sessionMaxAgeSeconds: maxAge });
  const peerTrusted = (req: FastifyRequest) => trusted(req.socket.remoteAddress);
  const readRequest = (req: FastifyRequest, withCookie = true): ReadRequest => {
    const header = req.headers[userHeader];
    return {
      authorization: req.headers.authorization,
      sessionCookie: withCookie ? req.cookies[SESSION_COOKIE] : undefined,
      // Only a trusted peer may name the user: from anywhere else the header is anyone's to forge.
      trustedProxyUser: peerTrusted(req) ? (Array.isArray(header) ? undefined : header) : undefined,
    };
  };
  const stateOf = (grant: ReadGrant | undefined): SessionState => ({
    mode: options.mode,
    authenticated: grant !== undefined,
    ...(grant ? { via: grant.via } : {}),
    ...(grant && 'credential' in grant ? { credential: grant.credential } : {}),
    ...(grant?.via === 'proxy' ? { user: grant.user } : {}),
    ...(grant?.via === 'session' ? { expiresAt: new Date(grant.expiresAt * 1000).toISOString() } : {}),
  });
  const cookieOptions = (req: FastifyRequest) => ({ path: '/', httpOnly: true, sameSite: 'strict' as const, secure: cameOverHttps('encrypted' in req.socket && req.socket.encrypted === true, peerTrusted(req), req.headers['x-forwarded-proto']) });
  const refuse = (reply: FastifyReply) =>
    reply.code(401).header('www-authenticate', 'Bearer').header('cache-control', 'no-store').send({ error: 'a read credential is required: log in, or send Authorization: Bearer <read or write token>' });

  app.addHook('onRequest', async (req, reply) => {
    if (req.routeOptions.config.readAuth === 'public') return;
    const grant = authoriseRead(readRequest(req), policy());
    if (!grant) return refuse(reply);
    req.readAccess = { grant, holds: () => authoriseRead(readRequest(req), policy()) !== undefined };
  });

  app.get(CONSOLE_PATHS.session, PUBLIC_ROUTE, async (req, reply) => reply.header('cache-control', 'no-store').send(stateOf(authoriseRead(readRequest(req), policy()))));

  app.post(CONSOLE_PATHS.session, PUBLIC_ROUTE, async (req, reply) => {
    reply.header('cache-control', 'no-store');
    const current = policy();
    if (current.mode === 'open') return stateOf({ via: 'open' });
    const body = LoginRequest.safeParse(req.body);
    if (!body.success) return reply.code(400).send({ error: 'the body must be {"token": "<read or write token>"}' });
    const credential = credentialOf(body.data.token, current.readToken, current.writeToken);
    if (!credential) return refuse(reply);
    const expiresAt = current.nowSeconds + maxAge;
    const key = credential === 'write-token' ? current.writeToken : current.readToken;
    reply.setCookie(SESSION_COOKIE, signSession(credential, key, expiresAt), { ...cookieOptions(req), maxAge });
    return stateOf({ via: 'session', credential, expiresAt });
  });

  app.delete(CONSOLE_PATHS.session, PUBLIC_ROUTE, async (req, reply) => {
    reply.clearCookie(SESSION_COOKIE, cookieOptions(req)).header('cache-control', 'no-store');
    // What is left without the cookie (a proxy user or a bearer still count).
    return stateOf(authoriseRead(readRequest(req, false), policy()));
  });
}

