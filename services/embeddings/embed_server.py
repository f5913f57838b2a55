#!/usr/bin/env python3
"""A local embeddings service: all-MiniLM-L6-v2 on ONNX Runtime behind an OpenAI-compatible API.

  POST /v1/embeddings  {"input": str | [str], "model"?: str, "encoding_format"?: "float" | "base64",
                        "dimensions"?: 384}
       -> {"object": "list", "data": [{"object": "embedding", "index": i, "embedding": [...] | "<base64>"}],
           "model": str, "usage": {"prompt_tokens": n, "total_tokens": n}}
  GET  /v1/models      the one model
  GET  /health         {"status": "ok", "model": str, "dimensions": 384}; answers without a key, so that
                       a supervisor can probe it

Errors answer with the OpenAI shape {"error": {"message", "type", "param", "code"}}. The vectors are
unit length (the sentence-transformers head is part of the ONNX graph), so a dot product is their
cosine. base64 is the vector's float32 values, little-endian, as the OpenAI SDKs decode it.

Environment:
  EMBED_MODEL_DIR     folder with model.onnx and tokenizer.json (default: model/ next to this file)
  EMBED_HOST          address to listen on (127.0.0.1: the service has no other protection than
                      EMBED_API_KEY, so it is not offered beyond this machine unless asked)
  EMBED_PORT          port (8081)
  EMBED_API_KEY       when set, every request but /health must carry "Authorization: Bearer <key>"
  EMBED_MODEL_NAME    the model's name in answers (all-MiniLM-L6-v2); a request may name it so, or
                      as sentence-transformers/<name>, or not at all
  EMBED_THREADS       ONNX Runtime's intra-op threads (the processors this process may use)
  EMBED_HTTP_THREADS  connections served at once (16); more wait for a free thread
  EMBED_LOG           when set, one line per request on stderr

Bounds: a body of at most 4 MiB, at most 256 inputs a request (the gateway sends at most
KGW_EMBEDDINGS_BATCH, itself at most 256), each input cut at 256 tokens, the length the model was
trained with (sentence-transformers' max_seq_length for it).
"""
import base64
import hmac
import json
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, HTTPServer

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

MAX_BODY_BYTES = 4 * 1024 * 1024
MAX_INPUTS = 256
MAX_TOKENS = 256
# Inputs run through the model in batches of this many, sorted by length first, so that each batch
# is padded to its own longest input and short texts do not pay for one long one.
BATCH = 32
# An idle kept-alive connection is closed after this many seconds, so that idle clients cannot hold
# all the threads of the pool. Node's fetch closes its own idle connections after 4 s.
IDLE_SECONDS = 5


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


MODEL_DIR = os.environ.get("EMBED_MODEL_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "model")
HOST = os.environ.get("EMBED_HOST") or "127.0.0.1"
PORT = int(os.environ.get("EMBED_PORT") or "8081")
API_KEY = os.environ.get("EMBED_API_KEY") or ""
MODEL_NAME = os.environ.get("EMBED_MODEL_NAME") or "all-MiniLM-L6-v2"
THREADS = int(os.environ.get("EMBED_THREADS") or cpu_count())
HTTP_THREADS = int(os.environ.get("EMBED_HTTP_THREADS") or "16")
LOG = bool(os.environ.get("EMBED_LOG"))


class Embedder:
    """One ONNX Runtime session, used by one batch at a time."""

    def __init__(self, model_dir: str) -> None:
        self.tokenizer = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        # No fixed length: encode_batch pads to the longest input of the batch.
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = ort.SessionOptions()
        options.intra_op_num_threads = THREADS
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Idle worker threads sleep instead of spinning: spinning keeps processors busy between
        # requests, which costs the other processes of a small machine more than it saves here.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(os.path.join(model_dir, "model.onnx"), options, providers=["CPUExecutionProvider"])
        self.dimensions = int(self.session.get_outputs()[1].shape[-1])
        # The session's intra-op threads already use every processor given; two batches at once
        # would only contend for them.
        self.lock = threading.Lock()

    def embed(self, texts: list) -> tuple:
        out = np.empty((len(texts), self.dimensions), np.float32)
        tokens = 0
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), BATCH):
            rows = order[start : start + BATCH]
            encodings = self.tokenizer.encode_batch([texts[i] for i in rows])
            ids = np.array([e.ids for e in encodings], np.int64)
            mask = np.array([e.attention_mask for e in encodings], np.int64)
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            with self.lock:
                out[rows] = self.session.run(["sentence_embedding"], feed)[0]
            tokens += int(mask.sum())
        return out, tokens


class RequestError(Exception):
    def __init__(self, status: int, message: str, param=None, code=None, kind: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.status, self.message, self.param, self.code, self.kind = status, message, param, code, kind


def parse(body: bytes) -> tuple:
    """The request's inputs and encoding, or a RequestError naming what is wrong."""
    try:
        request = json.loads(body)
    except ValueError:
        raise RequestError(400, "The body is not JSON.")
    if not isinstance(request, dict):
        raise RequestError(400, "The body must be a JSON object.")
    model = request.get("model")
    if model is not None and model not in (MODEL_NAME, "sentence-transformers/" + MODEL_NAME):
        raise RequestError(404, f"The model '{model}' does not exist; this service has '{MODEL_NAME}'.", "model", "model_not_found")
    inputs = request.get("input")
    if isinstance(inputs, str):
        inputs = [inputs]
    if not isinstance(inputs, list) or not inputs or not all(isinstance(text, str) for text in inputs):
        # Arrays of token ids, which the OpenAI API also takes, are refused: they would be ids of
        # another tokenizer.
        raise RequestError(400, "'input' must be a string or a non-empty array of strings.", "input")
    if len(inputs) > MAX_INPUTS:
        raise RequestError(400, f"'input' has {len(inputs)} items; at most {MAX_INPUTS} are allowed.", "input")
    encoding = request.get("encoding_format", "float")
    if encoding not in ("float", "base64"):
        raise RequestError(400, "'encoding_format' must be 'float' or 'base64'.", "encoding_format")
    dimensions = request.get("dimensions")
    # The model's vectors have one length; cutting them short would not give a Matryoshka-style
    # embedding, so any other length is refused rather than served wrong.
    if dimensions is not None and (isinstance(dimensions, bool) or dimensions != EMBEDDER.dimensions):
        raise RequestError(400, f"This model's vectors have {EMBEDDER.dimensions} dimensions; 'dimensions' may only be {EMBEDDER.dimensions}.", "dimensions")
    return inputs, encoding


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kgw-embeddings/1"
    timeout = IDLE_SECONDS

    def log_message(self, format: str, *args) -> None:  # noqa: A002 (the name is the base class's)
        if LOG:
            super().log_message(format, *args)

    def send_json(self, status: int, value: dict) -> None:
        body = json.dumps(value, separators=(",", ":")).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def send_error_json(self, error: RequestError) -> None:
        self.send_json(error.status, {"error": {"message": error.message, "type": error.kind, "param": error.param, "code": error.code}})

    def authorised(self) -> bool:
        if not API_KEY:
            return True
        given = self.headers.get("Authorization", "")
        # compare_digest: the time taken does not tell how much of a guess was right.
        return given.startswith("Bearer ") and hmac.compare_digest(given[len("Bearer ") :].encode(), API_KEY.encode())

    def refuse_unauthorised(self) -> None:
        self.send_error_json(RequestError(401, "A valid API key is required (Authorization: Bearer <key>).", code="invalid_api_key"))

    def do_GET(self) -> None:
        if self.path == "/health":
            self.send_json(200, {"status": "ok", "model": MODEL_NAME, "dimensions": EMBEDDER.dimensions})
        elif not self.authorised():
            self.refuse_unauthorised()
        elif self.path == "/v1/models":
            self.send_json(200, {"object": "list", "data": [{"id": MODEL_NAME, "object": "model", "created": 0, "owned_by": "local"}]})
        else:
            self.send_error_json(RequestError(404, f"No route {self.path}."))

    def do_POST(self) -> None:
        length = self.headers.get("Content-Length")
        try:
            size = int(length) if length is not None else -1
        except ValueError:
            size = -1
        if size < 0 or size > MAX_BODY_BYTES:
            # The body is left unread, so the connection cannot be used again.
            self.close_connection = True
            if size < 0:
                return self.send_error_json(RequestError(411 if length is None else 400, "A Content-Length is required."))
            return self.send_error_json(RequestError(400, f"The body has {size} bytes; at most {MAX_BODY_BYTES} are allowed."))
        body = self.rfile.read(size)
        if self.path != "/v1/embeddings":
            return self.send_error_json(RequestError(404, f"No route {self.path}."))
        if not self.authorised():
            return self.refuse_unauthorised()
        try:
            inputs, encoding = parse(body)
        except RequestError as error:
            return self.send_error_json(error)
        try:
            vectors, tokens = EMBEDDER.embed(inputs)
        except Exception as error:  # noqa: BLE001 (the client gets an answer whatever went wrong)
            print(f"embed_server.py: inference failed: {error!r}", file=sys.stderr, flush=True)
            return self.send_error_json(RequestError(500, "The model failed on this input.", kind="server_error"))
        if encoding == "base64":
            data = [{"object": "embedding", "index": i, "embedding": base64.b64encode(vectors[i].astype("<f4").tobytes()).decode()} for i in range(len(inputs))]
        else:
            data = [{"object": "embedding", "index": i, "embedding": vectors[i].tolist()} for i in range(len(inputs))]
        self.send_json(200, {"object": "list", "data": data, "model": MODEL_NAME, "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})


class PooledHTTPServer(HTTPServer):
    """An HTTP server whose connections are served by a fixed pool of threads.

    The standard library's ThreadingHTTPServer starts a thread for every connection with no bound;
    here a burst of connections waits for a free thread instead.
    """

    daemon_threads = True

    def __init__(self, address: tuple, threads: int) -> None:
        super().__init__(address, Handler)
        self.pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="http")

    def process_request(self, request, client_address) -> None:
        self.pool.submit(self.process_request_thread, request, client_address)

    def process_request_thread(self, request, client_address) -> None:
        try:
            self.finish_request(request, client_address)
        except Exception:  # noqa: BLE001 (as socketserver's own threads do)
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)


if __name__ == "__main__":
    started = time.monotonic()
    EMBEDDER = Embedder(MODEL_DIR)
    # One run before the port opens, so the first request does not pay for ONNX Runtime's setup.
    EMBEDDER.embed(["warm up"])
    server = PooledHTTPServer((HOST, PORT), HTTP_THREADS)
    print(
        f"embed_server.py: {MODEL_NAME} ({EMBEDDER.dimensions} dimensions, {THREADS} threads) on http://{HOST}:{server.server_port}/v1"
        f" (ready in {time.monotonic() - started:.1f} s)",
        file=sys.stderr,
        flush=True,
    )
    server.serve_forever()
