"""A stand-in vLLM HTTP handler for the launcher tests (Python source run in a child process):
/health answers 200 empty, every other path the bytes of `body` (a recorded /metrics dump); where
the script also defines `models` (a list of ids), /v1/models lists them as vLLM's OpenAI server does."""

# source of class H; the script that includes it defines `body` and imports http.server
HANDLER = r"""
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        data = b"" if self.path == "/health" else body
        if self.path == "/v1/models" and "models" in globals():
            listed = [{"id": m, "object": "model", "owned_by": "vllm"} for m in models]
            data = __import__("json").dumps({"object": "list", "data": listed}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def log_message(self, *a):
        pass
"""
