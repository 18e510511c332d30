"""Sentence embeddings shared by both corpora: the vector cache (fast, with a counting stand-in
for the model) and the model itself (integration: needs the semantic extra and the model)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from lemon_skills.search import embed
from tests.helpers.skills import write_skill


class CountingEncoder:
    """Stands in for the model: a fixed vector per text, and a record of what was encoded."""

    np = np

    def __init__(self, identity: str = "model-a") -> None:
        self.identity = identity
        self.encoded: list[str] = []

    def encode(self, texts: list[str], *, batch: int = 8) -> np.ndarray:
        self.encoded += texts
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row, len(text) % 384] = 1.0
        return out


def test_a_text_is_embedded_once_then_read_from_the_cache():
    first = CountingEncoder()
    a = embed.vectors(["alpha", "beta"], first)  # type: ignore[arg-type]
    second = CountingEncoder()
    b = embed.vectors(["beta", "alpha", "gamma!"], second)  # type: ignore[arg-type]
    assert first.encoded == ["alpha", "beta"]
    assert second.encoded == ["gamma!"]  # a new process embeds only the new text
    assert np.array_equal(b[1], a[0]) and np.array_equal(b[0], a[1])
    assert embed.store_path().is_file()


def test_another_model_never_reads_the_vectors_of_the_first():
    embed.vectors(["alpha"], CountingEncoder("model-a"))  # type: ignore[arg-type]
    other = CountingEncoder("model-b")
    embed.vectors(["alpha"], other)  # type: ignore[arg-type]
    assert other.encoded == ["alpha"]


def test_an_unwritable_cache_still_gives_vectors(monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setattr(embed, "store_path", lambda: blocker / "semantic.sqlite")
    enc = CountingEncoder()
    out = embed.vectors(["alpha", "beta"], enc)  # type: ignore[arg-type]
    assert out.shape == (2, 384) and enc.encoded == ["alpha", "beta"]


def test_top_similar_keeps_rows_above_the_floor_best_first():
    enc = CountingEncoder()
    matrix = np.eye(384, dtype=np.float32)[[5, 7, 5]]
    sims = embed.top_similar(matrix, "query", enc, floor=0.5)  # type: ignore[arg-type]
    assert sims == {0: 1.0, 2: 1.0}  # "query" has length 5: rows 0 and 2 match
    assert embed.top_similar(matrix, "   ", enc, floor=0.5) == {}  # type: ignore[arg-type]


def test_centring_ranks_by_what_sets_a_row_apart_from_the_rest():
    # Every row shares axis 0; row 0 is little else. The query is mostly axis 0 too, but
    # leans to axis 1, which only row 1 has: raw cosine picks row 0, centred row 1.
    rows = np.zeros((3, 384), dtype=np.float32)
    rows[0, 0] = 1.0
    rows[1, [0, 1]] = [0.6, 0.8]
    rows[2, [0, 2]] = [0.6, 0.8]
    query = np.zeros(384, dtype=np.float32)
    query[[0, 1]] = [0.9, 0.436]
    matrix, mean = embed.centred(rows)
    assert int(np.argmax(rows @ query)) == 0
    assert int(np.argmax(matrix @ embed.centre(query, mean))) == 1
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0)


def test_a_catalogue_of_one_keeps_its_similarity():
    matrix, mean = embed.centred(np.eye(384, dtype=np.float32)[[5]])
    sims = embed.top_similar(matrix, "query", CountingEncoder(), floor=0.5, mean=mean)  # type: ignore[arg-type]
    assert sims == {0: 1.0}  # "query" has length 5, the one row's direction


def _safetensors(path, tensors: dict[str, tuple[str, list[int], bytes]]) -> None:
    """A safetensors file as its format defines it (8-byte header length, JSON header)."""
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    data = b""
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {
            "dtype": dtype,
            "shape": shape,
            "data_offsets": [len(data), len(data) + len(raw)],
        }
        data += raw
    head = json.dumps(header).encode()
    head += b" " * (-len(head) % 8)
    path.write_bytes(len(head).to_bytes(8, "little") + head + data)


def test_model_weights_are_read_from_safetensors_as_written(tmp_path):
    weights = np.arange(6, dtype="<f4").reshape(2, 3) / 4
    ids = np.array([7, 8, 9], dtype="<i8")
    path = tmp_path / "model.safetensors"
    _safetensors(
        path, {"w": ("F32", [2, 3], weights.tobytes()), "ids": ("I64", [3], ids.tobytes())}
    )
    got = embed.load_weights(path)
    assert set(got) == {"w", "ids"}
    assert np.array_equal(got["w"], weights) and got["w"].dtype == np.float32
    assert np.array_equal(got["ids"], ids)


def test_a_model_in_a_dtype_numpy_lacks_is_an_error_not_garbage(tmp_path):
    path = tmp_path / "model.safetensors"
    _safetensors(path, {"w": ("BF16", [2], b"\x00\x01\x02\x03")})
    with pytest.raises(OSError, match="BF16"):
        embed.load_weights(path)


@pytest.mark.parametrize(
    ("env", "flag", "expected"),
    [("1", None, True), ("no", None, False), ("", True, True), ("yes", False, False)],
)
def test_semantic_is_requested_by_flag_first_then_environment(monkeypatch, env, flag, expected):
    monkeypatch.setenv("LEMON_SEMANTIC", env)
    assert embed.requested(flag) is expected


def _fake_packages(root, names):
    """Packages that fail if imported: finding them must not import them."""
    for name in names:
        (root / name).mkdir(parents=True)
        (root / name / "__init__.py").write_text("raise ImportError('imported to be found')\n")


def test_the_installed_extra_is_used_unless_turned_off(tmp_path, monkeypatch):
    # The real finder over a real folder; site-packages left off the path, so this
    # environment's own extras (installed or not) do not decide it.
    _fake_packages(tmp_path, ["tokenizers", embed.MODEL_PACKAGE])
    monkeypatch.setattr(
        sys, "path", [str(tmp_path), *(p for p in sys.path if "-packages" not in p)]
    )
    for name in ("tokenizers", embed.MODEL_PACKAGE):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.delenv("LEMON_SEMANTIC")
    assert embed.requested() is True
    assert "tokenizers" not in sys.modules and embed.MODEL_PACKAGE not in sys.modules
    for off in ("0", "off", "no"):
        monkeypatch.setenv("LEMON_SEMANTIC", off)
        assert embed.requested() is False
    monkeypatch.delenv("LEMON_SEMANTIC")
    assert embed.requested(False) is False
    (tmp_path / embed.MODEL_PACKAGE / "__init__.py").unlink()
    (tmp_path / embed.MODEL_PACKAGE).rmdir()
    assert embed.requested() is False  # the extra without its model: lexical
    monkeypatch.setenv("LEMON_SEMANTIC", "1")
    assert embed.requested() is True  # asked for: the missing model is then an error


def test_the_default_install_stays_lexical(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "path", [p for p in sys.path if "-packages" not in p])
    for name in ("tokenizers", embed.MODEL_PACKAGE):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.delenv("LEMON_SEMANTIC")
    assert embed.requested() is False


@pytest.mark.integration
def test_find_uses_the_installed_model_without_being_asked(project, project_skills, monkeypatch):
    write_skill(project_skills, "code-simplifier", description="Simplify and refine code.")
    cmd = [sys.executable, "-m", "lemon_skills", "skill", "find", "simplify code", "--explain"]
    monkeypatch.delenv("LEMON_SEMANTIC")
    auto = subprocess.run([*cmd, "--json"], cwd=project, capture_output=True, text=True)
    assert "similarity" in json.loads(auto.stdout)[0]["parts"], auto.stderr
    monkeypatch.setenv("LEMON_SEMANTIC", "0")
    off = subprocess.run([*cmd, "--json"], cwd=project, capture_output=True, text=True)
    assert "similarity" not in json.loads(off.stdout)[0]["parts"], off.stderr


@pytest.mark.integration
def test_paraphrases_are_closer_than_unrelated_text():
    enc = embed.encoder()
    v = enc.encode(
        ["merge two PDF files into one", "combine PDFs into a single document", "bake bread"]
    )
    sims = v @ v.T
    assert sims[0, 1] > 0.6 > sims[0, 2]
    assert abs(float((v[0] ** 2).sum()) - 1.0) < 1e-4


@pytest.mark.integration
def test_batching_does_not_change_vectors():
    enc = embed.encoder()
    texts = ["short", "a much longer sentence about deploying services to kubernetes"]
    together = enc.encode(texts)
    alone = enc.encode(texts[1:])
    assert float(together[1] @ alone[0]) > 0.9999


@pytest.mark.integration
def test_encoding_uses_one_blas_thread_and_leaves_the_callers_setting(monkeypatch):
    import threadpoolctl

    enc = embed.encoder()
    seen: list[int] = []
    forward = enc._forward

    def spy(texts: list[str]) -> np.ndarray:
        seen.extend(
            i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"
        )
        return forward(texts)

    monkeypatch.setattr(enc, "_forward", spy)
    with threadpoolctl.threadpool_limits(limits=4, user_api="blas"):
        enc.encode(["merge two PDF files into one"])
        after = [
            i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"
        ]
    # Threads on a one-query batch cost more than they save, and spin on a busy machine.
    assert seen and set(seen) == {1}
    assert set(after) == {4}  # the application's own BLAS setting is back
