"""Signed skills: verify a Sigstore bundle over a skill directory's digest before installing.

The signature is ``skill.sigstore.json`` at the top of the skill directory, as the OpenSSF
``model-signing`` tool writes it: a Sigstore bundle whose DSSE envelope carries an in-toto
statement of every file's sha256 (the signature file itself and ``.git`` excluded). Three kinds
of bundle are verified, each against what the user trusts:

* ``sigstore`` (keyless): a Fulcio certificate and a Rekor entry; the certificate's identity and
  OIDC issuer must be the ones given (``identity``/``issuer``). The trust root is Sigstore's
  public-good instance, fetched and kept fresh over TUF, unless ``trust_config`` names a
  ClientTrustConfig file, in which case nothing is fetched.
* ``certificate``: a certificate chain; it must lead to a CA in ``trust_root`` (PEM), and the
  leaf's identity (email or URI SAN) and issuer (Fulcio's OIDC-issuer extension) must match.
* ``key``: signed by a key; it must verify with the public key in ``key``.

Verification needs the ``signing`` extra (``model-signing``); it is imported only here.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from lemon_skills import _fs
from lemon_skills.errors import ConfigError, TrustPolicyViolation
from lemon_skills.paths import Scope, scope_root

SIGNATURE_FILE = "skill.sigstore.json"
Kind = Literal["sigstore", "certificate", "key"]
#: Fulcio's OIDC issuer extensions: v2 (DER UTF8String) and the deprecated v1 (raw bytes).
_ISSUER_V2 = "1.3.6.1.4.1.57264.1.8"
_ISSUER_V1 = "1.3.6.1.4.1.57264.1.1"


@dataclass(frozen=True, slots=True, kw_only=True)
class Trust:
    """What the user trusts a signature to come from, and whether one is required."""

    required: bool = False
    identity: str | None = None
    issuer: str | None = None
    trust_root: Path | None = None
    trust_config: Path | None = None
    key: Path | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Verified:
    """A signature that verified: what the lockfile records and ``verify`` shows."""

    kind: Kind
    identity: str
    issuer: str | None
    digest: str
    #: What it was verified against (a file path), so ``update`` checks the next version the same.
    trusted: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The lock record's ``signature`` field."""
        return {
            "kind": self.kind,
            "identity": self.identity,
            "issuer": self.issuer,
            "digest": self.digest,
            "trusted": self.trusted,
        }


def from_record(rec: Any) -> Trust:
    """What an update must verify against: a skill signed at install stays signed by the same
    signer (an update can never drop the signature or change who signed)."""
    if not isinstance(rec, dict):
        return Trust()
    kind, trusted = rec.get("kind"), rec.get("trusted")
    path = Path(trusted) if isinstance(trusted, str) else None
    return Trust(
        required=True,
        identity=None if kind == "key" else rec.get("identity"),
        issuer=rec.get("issuer"),
        trust_root=path if kind == "certificate" else None,
        trust_config=path if kind == "sigstore" else None,
        key=path if kind == "key" else None,
    )


def trust_for(cwd: Path, given: Trust) -> Trust:
    """``given`` (the caller's flags) completed by ``signatures`` in both scopes' skills.json:
    required when any of them requires it; a value given wins over the files'.

    ``"signatures": "required"``, or an object with ``required``, ``identity``, ``issuer``,
    ``trust_root`` and ``key`` (paths relative to that skills.json's directory).

    Raises:
        ConfigError: a skills.json is corrupt or its ``signatures`` has the wrong shape.
    """
    out = given
    scopes: tuple[Scope, ...] = ("project", "global")
    for scope in scopes:
        path = scope_root(scope, cwd) / "skills.json"
        spec = _fs.read_json(path, default=dict).get("signatures")
        out = _merge(out, _parse(spec, path))
    if out.trust_root is not None and out.trust_root.suffix == ".json":
        out = replace(out, trust_config=out.trust_root, trust_root=None)
    return out


def _parse(spec: Any, path: Path) -> Trust:
    if spec is None or spec == "optional":
        return Trust()
    if spec == "required":
        return Trust(required=True)
    if not isinstance(spec, dict):
        raise ConfigError('"signatures" must be "required", "optional" or an object', path=path)

    def text(name: str) -> str | None:
        value = spec.get(name)
        if value is not None and not isinstance(value, str):
            raise ConfigError(f'"signatures.{name}" must be a string', path=path)
        return value

    def file(name: str) -> Path | None:
        value = text(name)
        return None if value is None else (path.parent / value).absolute()

    return Trust(
        required=bool(spec.get("required", False)),
        identity=text("identity"),
        issuer=text("issuer"),
        trust_root=file("trust_root"),
        key=file("key"),
    )


def _merge(a: Trust, b: Trust) -> Trust:
    return Trust(
        required=a.required or b.required,
        identity=a.identity or b.identity,
        issuer=a.issuer or b.issuer,
        trust_root=a.trust_root or b.trust_root,
        trust_config=a.trust_config or b.trust_config,
        key=a.key or b.key,
    )


def record(skill_dir: Path, trust: Trust, *, key: str) -> dict[str, Any] | None:
    """What the lockfile records of ``skill_dir``'s signature (see ``check``)."""
    verified = check(skill_dir, trust, key=key)
    return None if verified is None else verified.to_dict()


def check(skill_dir: Path, trust: Trust, *, key: str) -> Verified | None:
    """Verify ``skill_dir``'s signature; None when it has none and none is required.

    Raises:
        TrustPolicyViolation: unsigned while a signature is required, or the signature does
            not verify (content changed, untrusted identity or root, wrong key).
        ConfigError: the signing extra is not installed, or the trust settings cannot be used.
    """
    sig = skill_dir / SIGNATURE_FILE
    if not sig.is_file():
        if trust.required:
            raise TrustPolicyViolation(
                f"{key}: unsigned, and a signature is required (no {SIGNATURE_FILE}); "
                "nothing was installed",
                hint="install a signed release, or drop --require-signature / "
                '"signatures": "required" for this source',
            )
        return None
    bundle = _read(sig, key)
    kind = _kind(bundle)
    verifier = _verifier(kind, trust, key)
    _run(verifier, skill_dir, sig, key)
    identity, issuer = _who(kind, bundle, trust)
    _check_identity(kind, identity, issuer, trust, key)
    trusted = {"key": trust.key, "certificate": trust.trust_root}.get(kind, trust.trust_config)
    return Verified(
        kind=kind,
        identity=identity,
        issuer=issuer,
        digest=_statement_digest(bundle),
        trusted=None if trusted is None else str(trusted),
    )


def _read(sig: Path, key: str) -> Mapping[str, Any]:
    try:
        data = json.loads(sig.read_bytes())
    except (OSError, ValueError) as exc:
        reason = f"{key}: {SIGNATURE_FILE} is not a readable bundle: {exc}"
        raise TrustPolicyViolation(reason) from exc
    if not isinstance(data, dict) or "verificationMaterial" not in data:
        raise TrustPolicyViolation(f"{key}: {SIGNATURE_FILE} is not a Sigstore bundle")
    return data


def _kind(bundle: Mapping[str, Any]) -> Kind:
    material = bundle.get("verificationMaterial") or {}
    if "publicKey" in material:
        return "key"
    if "x509CertificateChain" in material:
        return "certificate"
    return "sigstore"


def _verifier(kind: Kind, trust: Trust, key: str) -> Any:
    try:
        from model_signing import hashing, verifying
    except ImportError as exc:
        raise ConfigError(
            f"{key} is signed, and verifying signatures needs the signing extra",
            hint="pip install 'lemon-skills[signing]'",
        ) from exc
    # The library's constructors are untyped; the configuration is typed from here on.
    cfg: Any = verifying.Config()  # type: ignore[no-untyped-call]
    files: Any = hashing.Config()  # type: ignore[no-untyped-call]
    cfg.set_hashing_config(files.set_ignored_paths(paths=[SIGNATURE_FILE], ignore_git_paths=True))
    if kind == "key":
        if trust.key is None:
            raise TrustPolicyViolation(
                f"{key}: signed with a key, and no trusted key was given; nothing was installed",
                hint="pass --key PUBLIC_KEY.pem (or signatures.key in skills.json)",
            )
        return cfg.use_elliptic_key_verifier(public_key=trust.key)
    if kind == "certificate":
        if trust.trust_root is None:
            raise TrustPolicyViolation(
                f"{key}: signed with a certificate chain, and no trust root was given; "
                "nothing was installed",
                hint="pass --trust-root CA.pem (or signatures.trust_root in skills.json)",
            )
        return cfg.use_certificate_verifier(certificate_chain=[trust.trust_root])
    if not trust.identity or not trust.issuer:
        raise TrustPolicyViolation(
            f"{key}: a Sigstore signature is verified against the identity and issuer you "
            "trust, and none was given; nothing was installed",
            hint="pass --identity EMAIL_OR_URI --issuer OIDC_ISSUER_URL",
        )
    return cfg.use_sigstore_verifier(
        identity=trust.identity, oidc_issuer=trust.issuer, trust_config=trust.trust_config
    )


def _run(verifier: Any, skill_dir: Path, sig: Path, key: str) -> None:
    # model-signing reports every failure (bad signature, untrusted chain, changed file,
    # identity policy) as one of these; the message says which.
    try:
        verifier.verify(skill_dir, sig)
    except Exception as exc:  # the library's failures (ValueError, OpenSSL, sigstore) share no base
        raise TrustPolicyViolation(
            f"{key}: signature does not verify: {_reason(exc)}; nothing was installed"
        ) from exc


def _reason(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    if "Signature mismatch" in text:
        return "the files differ from what was signed (" + text.split(":", 1)[1].strip()[:300] + ")"
    return text[:300]


def _who(kind: Kind, bundle: Mapping[str, Any], trust: Trust) -> tuple[str, str | None]:
    if kind == "key":
        pem = Path(trust.key or "").read_bytes()
        return "key:sha256:" + hashlib.sha256(pem.strip()).hexdigest()[:32], None
    if kind == "sigstore":
        return str(trust.identity), trust.issuer
    from cryptography import x509

    chain = bundle["verificationMaterial"]["x509CertificateChain"]["certificates"]
    leaf = x509.load_der_x509_certificate(base64.b64decode(chain[0]["rawBytes"]))
    return _san(leaf), _issuer(leaf)


def _san(cert: Any) -> str:
    from cryptography import x509

    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return str(cert.subject.rfc4514_string())
    for kind in (x509.RFC822Name, x509.UniformResourceIdentifier, x509.DNSName):
        values = san.get_values_for_type(kind)
        if values:
            return str(values[0])
    return str(cert.subject.rfc4514_string())


def _issuer(cert: Any) -> str | None:
    from cryptography import x509

    for oid in (_ISSUER_V2, _ISSUER_V1):
        try:
            ext = cert.extensions.get_extension_for_oid(x509.ObjectIdentifier(oid))
        except x509.ExtensionNotFound:
            continue
        raw = ext.value.value
        if oid == _ISSUER_V2 and len(raw) > 2 and raw[0] == 0x0C:
            raw = raw[2:] if raw[1] < 0x80 else raw[2 + (raw[1] & 0x7F) :]
        return bytes(raw).decode("utf-8", "replace")
    return None


def _check_identity(kind: Kind, identity: str, issuer: str | None, trust: Trust, key: str) -> None:
    if kind != "certificate":
        return
    if trust.identity is None:
        raise TrustPolicyViolation(
            f"{key}: signed by {identity}, and no trusted identity was given; "
            "nothing was installed",
            hint="pass --identity with the signer you trust",
        )
    if identity != trust.identity:
        raise TrustPolicyViolation(
            f"{key}: signed by {identity}, not by the trusted identity {trust.identity}; "
            "nothing was installed"
        )
    if trust.issuer is not None and issuer != trust.issuer:
        raise TrustPolicyViolation(
            f"{key}: certificate issued through {issuer or 'an unknown issuer'}, not "
            f"{trust.issuer}; nothing was installed"
        )


def _statement_digest(bundle: Mapping[str, Any]) -> str:
    try:
        payload = json.loads(base64.b64decode(bundle["dsseEnvelope"]["payload"]))
        return "sha256:" + str(payload["subject"][0]["digest"]["sha256"])
    except (KeyError, IndexError, TypeError, ValueError):
        return ""
