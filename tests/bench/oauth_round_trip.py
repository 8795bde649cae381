"""The cost of OAuth at the HTTP server's door: median and p90 of a `tools/list` round trip
over one keep-alive connection (Python's http.client), with a static bearer token and with
an OAuth access token, against one `toolhost serve --http`, in turns, three rounds.

    python tests/bench/oauth_round_trip.py [ES256|RS256]

Needs what the OAuth tests install first (`cargo test --release --workspace --test e2e --
oauth::` makes both): the release `toolhost`, the `math` guest, and `oidc-provider` under
target/toolchains/oauth-as. A measurement by hand, not a test: run it on a quiet machine.
"""
import http.client, json, os, statistics, subprocess, sys, time, urllib.request, urllib.parse, hashlib, socket, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLHOST = f"{ROOT}/target/release/toolhost"
AS_DIR = f"{ROOT}/target/toolchains/oauth-as"
def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

port = free_port()
resource = f"http://127.0.0.1:{port}/mcp"
auth = subprocess.Popen(["node", f"{AS_DIR}/oauth_server.mjs", "--port", "0", "--resource", resource, "--alg", sys.argv[1] if len(sys.argv) > 1 else "ES256"],
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
issuer = json.loads(auth.stdout.readline())["issuer"]
d = tempfile.mkdtemp()
os.makedirs(f"{d}/tools/math")
subprocess.run(["cp", f"{ROOT}/target/guests/wasm32-wasip2/release/math.wasm", f"{d}/tools/math/math.wasm"], check=True)
static = "static-token-0123456789abcdef"
open(f"{d}/toolhost.toml", "w").write(
    f'[[token]]\nagent = "static"\nsha256 = "{hashlib.sha256(static.encode()).hexdigest()}"\n\n'
    f'[oauth]\nissuer = "{issuer}"\nresource = "{resource}"\nscopes = ["mcp:tools"]\n')
server = subprocess.Popen([TOOLHOST, "--config", f"{d}/toolhost.toml", "serve", f"{d}/tools", "--http", f"127.0.0.1:{port}"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(1.5)
form = urllib.parse.urlencode({"grant_type": "client_credentials", "client_id": "test-client", "client_secret": "test-secret",
                               "resource": resource, "scope": "mcp:tools"}).encode()
token = json.loads(urllib.request.urlopen(issuer + "/token", form).read())["access_token"]

def run(bearer, n=3000):
    c = http.client.HTTPConnection("127.0.0.1", port)
    h = {"authorization": f"Bearer {bearer}", "content-type": "application/json", "accept": "application/json, text/event-stream"}
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "b", "version": "0"}}}
    c.request("POST", "/mcp", json.dumps(init), h); r = c.getresponse(); r.read()
    h["mcp-session-id"] = r.getheader("mcp-session-id"); h["mcp-protocol-version"] = "2025-06-18"
    c.request("POST", "/mcp", json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), h); c.getresponse().read()
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    times = []
    for i in range(n):
        t = time.perf_counter(); c.request("POST", "/mcp", body, h); r = c.getresponse(); r.read(); times.append(time.perf_counter() - t)
        assert r.status == 200, r.status
    times = sorted(times[200:])
    return statistics.median(times) * 1e6, times[int(len(times) * 0.9)] * 1e6

try:
    for round in range(3):
        s = run(static); o = run(token)
        print(f"round {round}: static p50 {s[0]:.0f} µs p90 {s[1]:.0f} µs | oauth p50 {o[0]:.0f} µs p90 {o[1]:.0f} µs")
finally:
    server.kill(); auth.kill()
