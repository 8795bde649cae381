// An OAuth 2.1 authorization server for the OAuth tests of toolhost's Streamable HTTP server,
// built on panva's `oidc-provider` (npm, 9.x). It issues JWT access tokens (RFC 9068,
// `typ: at+jwt`) for the resource indicators (RFC 8707) it is told about.
//
//     node oauth_server.mjs --port 0 --resource http://127.0.0.1:PORT/mcp [--resource URL ...]
//                           [--issuer URL] [--alg ES256|RS256] [--ttl SECONDS]
//
// `oidc-provider` must resolve from this file's directory (a `node_modules` beside it or above).
// Listens on 127.0.0.1 only. Once listening it prints one JSON line on stdout,
// `{"issuer": ISSUER, "url": "http://127.0.0.1:PORT"}`; ISSUER is the URL unless `--issuer`
// names another one (a second server that claims the first one's issuer but signs with its own
// key). Nothing else goes to stdout; the provider's notices go to stderr.
//
// What it serves (the routes are oidc-provider's defaults; discovery lists them):
//   GET  /.well-known/openid-configuration       discovery, also at /.well-known/oauth-authorization-server
//   GET  /jwks                                   the public signing key, only the current one
//   POST /reg                                    open dynamic client registration (RFC 7591)
//   GET  /auth                                   authorization endpoint (PKCE S256; required for public clients)
//   POST /token                                  authorization_code, refresh_token, client_credentials
//   GET  /interaction/UID                        login prompt: JSON {"uid", "prompt": "login",
//                                                "reasons", "client_id", "login_action"}
//   POST /interaction/UID/login  (login=NAME)    logs in as account NAME (no password) -> 303
// The consent prompt is granted on its GET: GET /interaction/UID answers `303` back to the
// authorization endpoint at once, having granted the requested OIDC scopes and, for each
// requested resource, its scopes (POST /interaction/UID/confirm does the same). So a client
// follows redirects, and POSTs a login only when a GET answers `"prompt": "login"`, until it is
// redirected to its redirect_uri (`?code=...&state=...&iss=ISSUER`).
//
// Every `--resource` gets JWT access tokens with `aud` = that URL, the scopes `mcp:tools`
// and `tools:ops`, and the `--ttl` lifetime (default 300 s); any other resource is
// `invalid_target`. A pre-registered confidential client mints tokens directly:
//     POST /token  client_id=test-client client_secret=test-secret
//                  grant_type=client_credentials resource=URL scope=mcp:tools
// and `short-client` (secret `short-secret`) the same, with tokens that live one second.
// (`sub` and `client_id` are both `test-client` in such a token; in one from the
// authorization code flow `sub` is the account and `client_id` the registered client.)
//
// A line `rotate` on stdin makes a new signing key (new `kid`): new tokens are signed with it,
// and /jwks serves only it. Registered clients, grants, refresh tokens and sessions survive (one
// in-memory store for the process). It answers with one line `{"rotated": KID}`.
// The process exits on SIGTERM or SIGINT and when stdin closes: start it with stdin piped and
// keep the pipe open for as long as it should run.

import * as crypto from 'node:crypto';
import * as http from 'node:http';
import * as readline from 'node:readline';
import { parseArgs } from 'node:util';

import Provider, { errors } from 'oidc-provider';

// oidc-provider writes its notices with console.info; stdout is for the JSON lines only.
console.info = console.error;
console.log = console.error;

const RESOURCE_SCOPES = 'mcp:tools tools:ops';
const TEST_CLIENT = { client_id: 'test-client', client_secret: 'test-secret' };
// Its tokens live one second whatever `--ttl` says: expired tokens for the tests.
const SHORT_CLIENT = { client_id: 'short-client', client_secret: 'short-secret' };

const { values: args } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    issuer: { type: 'string' },
    resource: { type: 'string', multiple: true, default: [] },
    alg: { type: 'string', default: 'ES256' },
    ttl: { type: 'string', default: '300' },
  },
  strict: true,
});

const alg = args.alg;
if (alg !== 'ES256' && alg !== 'RS256') {
  throw new Error(`--alg must be ES256 or RS256, not ${alg}`);
}
const ttl = Number.parseInt(args.ttl, 10);
if (!(ttl > 0)) {
  throw new Error(`--ttl must be a positive number of seconds, not ${args.ttl}`);
}
const resources = new Set(args.resource);

// The lifetime of an access token for `client`, in seconds.
function lifetimeFor(client) {
  return client?.clientId === SHORT_CLIENT.client_id ? 1 : ttl;
}

function writeLine(object) {
  process.stdout.write(`${JSON.stringify(object)}\n`);
}

function newSigningKey() {
  const { privateKey } = alg === 'ES256'
    ? crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' })
    : crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = privateKey.export({ format: 'jwk' });
  return { ...jwk, kid: crypto.randomUUID(), alg, use: 'sig' };
}

// The same cookie keys for every Provider this process builds, so that sessions and
// interactions started before a key rotation go on after it.
const cookieKeys = [crypto.randomBytes(32).toString('base64url')];

// oidc-provider's own in-memory adapter keeps one store per Provider instance, so a rotation
// (a new Provider) would forget registered clients, grants, codes and sessions. This adapter
// (oidc-provider's documented adapter interface) keeps them in one store for the process.
const store = new Map();

function storeGet(key) {
  const entry = store.get(key);
  if (entry && entry.expiresAt !== undefined && entry.expiresAt <= Date.now()) {
    store.delete(key);
    return undefined;
  }
  return entry?.value;
}

function storeSet(key, value, expiresIn) {
  const expiresAt = typeof expiresIn === 'number' ? Date.now() + expiresIn * 1000 : undefined;
  store.set(key, { value, expiresAt });
}

class SharedMemoryAdapter {
  constructor(model) {
    this.model = model;
  }

  key(id) {
    return `${this.model}:${id}`;
  }

  async upsert(id, payload, expiresIn) {
    const key = this.key(id);
    storeSet(key, payload, expiresIn);
    if (this.model === 'Session') {
      storeSet(`sessionUid:${payload.uid}`, id, expiresIn);
    }
    if (payload.userCode) {
      storeSet(`userCode:${payload.userCode}`, id, expiresIn);
    }
    if (payload.grantId) {
      const members = storeGet(`grant:${payload.grantId}`) ?? [];
      storeSet(`grant:${payload.grantId}`, [...members, key]);
    }
  }

  async find(id) {
    return storeGet(this.key(id));
  }

  async findByUid(uid) {
    const id = storeGet(`sessionUid:${uid}`);
    return id === undefined ? undefined : this.find(id);
  }

  async findByUserCode(userCode) {
    const id = storeGet(`userCode:${userCode}`);
    return id === undefined ? undefined : this.find(id);
  }

  async consume(id) {
    const payload = storeGet(this.key(id));
    if (payload) {
      payload.consumed = Math.floor(Date.now() / 1000);
    }
  }

  async destroy(id) {
    store.delete(this.key(id));
  }

  async revokeByGrantId(grantId) {
    for (const key of storeGet(`grant:${grantId}`) ?? []) {
      store.delete(key);
    }
    store.delete(`grant:${grantId}`);
  }
}

function buildProvider(issuer, signingKey) {
  const provider = new Provider(issuer, {
    adapter: SharedMemoryAdapter,
    jwks: { keys: [signingKey] },
    cookies: { keys: cookieKeys },
    clients: [TEST_CLIENT, SHORT_CLIENT].map((client) => ({
      ...client,
      grant_types: ['client_credentials', 'authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: ['http://localhost:3030/callback'],
    })),
    clientDefaults: {
      id_token_signed_response_alg: alg,
    },
    responseTypes: ['code'],
    // The resource scopes are listed here too so that a client may register with them in its
    // `scope` metadata (oidc-provider refuses scope values it does not know) and so that
    // discovery's `scopes_supported` names them.
    scopes: ['openid', 'offline_access', ...RESOURCE_SCOPES.split(' ')],
    claims: { openid: ['sub'] },
    findAccount(_ctx, sub) {
      return { accountId: sub, claims: () => ({ sub }) };
    },
    interactions: {
      url: (_ctx, interaction) => `/interaction/${interaction.uid}`,
    },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true, initialAccessToken: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        // A request that names no resource gets no JWT (oidc-provider's default).
        defaultResource: (_ctx, _client, oneOf) => oneOf,
        // The token request of the code flow may leave `resource` out and still get a
        // token for the resource that was authorized.
        useGrantedResource: () => true,
        getResourceServerInfo(_ctx, resourceIndicator, client) {
          if (!resources.has(resourceIndicator)) {
            throw new errors.InvalidTarget();
          }
          return {
            scope: RESOURCE_SCOPES,
            audience: resourceIndicator,
            accessTokenTTL: lifetimeFor(client),
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg } },
          };
        },
      },
    },
    pkce: {
      // oidc-provider's default: required for public clients (token_endpoint_auth_method none).
      required: (_ctx, client) => client.clientAuthMethod === 'none',
    },
    ttl: {
      AccessToken: (_ctx, _token, client) => lifetimeFor(client),
      ClientCredentials: (_ctx, _token, client) => lifetimeFor(client),
      AuthorizationCode: 60,
      Interaction: 600,
      Grant: 3600,
      Session: 3600,
      RefreshToken: 3600,
    },
    clientBasedCORS: () => false,
    // Refresh tokens whenever the client may use them, not only with `offline_access`.
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    renderError(ctx, out) {
      ctx.type = 'json';
      ctx.body = out;
    },
  });
  provider.on('server_error', (_ctx, error) => console.error('oidc-provider server_error:', error));
  return provider;
}

function sendJson(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
  res.end(text);
}

async function readForm(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

// Grants what the pending consent prompt asks for: the missing OIDC scopes and claims,
// and for each resource its missing scopes.
async function grantConsent(provider, interaction) {
  const { prompt: { details }, params, session, grantId } = interaction;
  const grant = grantId
    ? await provider.Grant.find(grantId)
    : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
  if (details.missingOIDCScope) {
    grant.addOIDCScope(details.missingOIDCScope.join(' '));
  }
  if (details.missingOIDCClaims) {
    grant.addOIDCClaims(details.missingOIDCClaims);
  }
  if (details.missingResourceScopes) {
    for (const [indicator, scopes] of Object.entries(details.missingResourceScopes)) {
      grant.addResourceScope(indicator, scopes.join(' '));
    }
  }
  return grant.save();
}

async function interaction(provider, req, res, uid, action) {
  const details = await provider.interactionDetails(req, res);
  if (details.uid !== uid) {
    sendJson(res, 400, { error: 'interaction_mismatch', uid, cookie_uid: details.uid });
    return;
  }
  const promptName = details.prompt.name;
  if (action === undefined && req.method === 'GET') {
    if (promptName === 'consent') {
      const grantId = await grantConsent(provider, details);
      await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
      return;
    }
    sendJson(res, 200, {
      uid,
      prompt: promptName,
      reasons: details.prompt.reasons,
      client_id: details.params.client_id,
      login_action: `/interaction/${uid}/login`,
    });
    return;
  }
  if (action === 'login' && req.method === 'POST') {
    const form = await readForm(req);
    const login = form.get('login');
    if (!login) {
      sendJson(res, 400, { error: 'login_required', error_description: 'form field `login` is missing' });
      return;
    }
    await provider.interactionFinished(req, res, { login: { accountId: login } }, { mergeWithLastSubmission: false });
    return;
  }
  if (action === 'confirm' && req.method === 'POST' && promptName === 'consent') {
    const grantId = await grantConsent(provider, details);
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
    return;
  }
  sendJson(res, 404, { error: 'not_found' });
}

let provider;
let handler;

const server = http.createServer(async (req, res) => {
  try {
    const path = req.url.split('?')[0];
    const match = /^\/interaction\/([^/]+)(?:\/([^/]+))?$/.exec(path);
    if (match) {
      await interaction(provider, req, res, match[1], match[2]);
      return;
    }
    if (path === '/.well-known/oauth-authorization-server') {
      // RFC 8414 metadata: the same document as OpenID discovery.
      req.url = '/.well-known/openid-configuration';
    }
    handler(req, res);
  } catch (error) {
    console.error('oauth_server:', error);
    if (!res.headersSent) {
      sendJson(res, 400, { error: error.name ?? 'error', error_description: String(error.message ?? error) });
    } else {
      res.end();
    }
  }
});

function shutdown() {
  server.close();
  server.closeAllConnections?.();
  process.exit(0);
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);

server.listen(Number.parseInt(args.port, 10), '127.0.0.1', () => {
  const url = `http://127.0.0.1:${server.address().port}`;
  const issuer = args.issuer ?? url;
  let signingKey = newSigningKey();
  provider = buildProvider(issuer, signingKey);
  handler = provider.callback();
  writeLine({ issuer, url });

  const input = readline.createInterface({ input: process.stdin });
  input.on('line', (line) => {
    if (line.trim() === 'rotate') {
      signingKey = newSigningKey();
      provider = buildProvider(issuer, signingKey);
      handler = provider.callback();
      writeLine({ rotated: signingKey.kid });
    }
  });
  input.on('close', shutdown);
});
