"""A private Sigstore instance for offline tests of keyless signatures.

Every party a keyless signature involves is played here with keys made in the test: a
Fulcio-like CA issuing a short-lived code-signing certificate (the signer's identity in its SAN,
the OIDC issuer in Fulcio's extension, an embedded SCT signed by a CT log key) and a Rekor-like
log whose key signs the entry's inclusion promise and the checkpoint of a one-entry tree. The
trust config names exactly these keys, so sigstore's verifier runs every check it runs against
the public-good instance: chain at the log's time, SCT, identity policy, inclusion proof,
checkpoint, inclusion promise, DSSE signature, and the entry's consistency with the envelope.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import rfc8785
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID, ObjectIdentifier

#: Fulcio's OIDC issuer extensions: v1 (raw bytes, what sigstore's identity policy reads) and
#: v2 (a DER UTF8String); Fulcio writes both.
_ISSUER_V1 = ObjectIdentifier("1.3.6.1.4.1.57264.1.1")
_ISSUER_V2 = ObjectIdentifier("1.3.6.1.4.1.57264.1.8")
_SCT_LIST = ObjectIdentifier("1.3.6.1.4.1.11129.2.4.2")
_BUNDLE_V03 = "application/vnd.dev.sigstore.bundle.v0.3+json"
_SINCE = "2020-01-01T00:00:00Z"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _spki(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def _sign(key: ec.EllipticCurvePrivateKey, data: bytes) -> bytes:
    return key.sign(data, ec.ECDSA(hashes.SHA256()))


def _pem(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def key_usage(**on: bool) -> x509.KeyUsage:
    """An X.509 key usage with only the named bits set."""
    names = [
        "digital_signature",
        "content_commitment",
        "key_encipherment",
        "data_encipherment",
        "key_agreement",
        "key_cert_sign",
        "crl_sign",
        "encipher_only",
        "decipher_only",
    ]
    return x509.KeyUsage(**{n: on.get(n, False) for n in names})


def _log_key(key: ec.EllipticCurvePrivateKey, url: str) -> dict[str, Any]:
    return {
        "baseUrl": url,
        "hashAlgorithm": "SHA2_256",
        "publicKey": {
            "rawBytes": _b64(_spki(key)),
            "keyDetails": "PKIX_ECDSA_P256_SHA_256",
            "validFor": {"start": _SINCE},
        },
        "logId": {"keyId": _b64(hashlib.sha256(_spki(key)).digest())},
    }


@dataclass
class Instance:
    """The CA, CT log and transparency log of a test Sigstore, with their keys."""

    ca_key: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP256R1())
    )
    ct_key: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP256R1())
    )
    log_key: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP256R1())
    )
    ca: x509.Certificate = field(init=False)

    def __post_init__(self) -> None:
        now = datetime.datetime.now(datetime.UTC)
        name = x509.Name(
            [
                x509.NameAttribute(NameOID.ORGANIZATION_NAME, "test.invalid"),
                x509.NameAttribute(NameOID.COMMON_NAME, "test-fulcio"),
            ]
        )
        ski = x509.SubjectKeyIdentifier.from_public_key(self.ca_key.public_key())
        self.ca = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(self.ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=1), critical=True)
            .add_extension(key_usage(key_cert_sign=True, crl_sign=True), critical=True)
            .add_extension(ski, critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski),
                critical=False,
            )
            .sign(self.ca_key, hashes.SHA256())
        )

    def trust_config(self, path: Path) -> Path:
        """A ClientTrustConfig naming only this instance (what ``--trust-root`` takes)."""
        root = {
            "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
            "tlogs": [_log_key(self.log_key, "https://rekor.test.invalid")],
            "certificateAuthorities": [
                {
                    "subject": {"organization": "test.invalid", "commonName": "test-fulcio"},
                    "uri": "https://fulcio.test.invalid",
                    "certChain": {
                        "certificates": [
                            {"rawBytes": _b64(self.ca.public_bytes(serialization.Encoding.DER))}
                        ]
                    },
                    "validFor": {"start": _SINCE},
                }
            ],
            "ctlogs": [_log_key(self.ct_key, "https://ctfe.test.invalid")],
            "timestampAuthorities": [],
        }
        config = {
            "mediaType": "application/vnd.dev.sigstore.clienttrustconfig.v0.1+json",
            "trustedRoot": root,
            "signingConfig": {
                "mediaType": "application/vnd.dev.sigstore.signingconfig.v0.2+json",
                "caUrls": [],
                "oidcUrls": [],
                "rekorTlogUrls": [],
                "tsaUrls": [],
                "rekorTlogConfig": {"selector": "ANY"},
                "tsaConfig": {"selector": "ANY"},
            },
        }
        path.write_text(json.dumps(config))
        return path

    def certificate(
        self, key: ec.EllipticCurvePrivateKey, identity: str, issuer: str
    ) -> x509.Certificate:
        """A ten-minute code-signing certificate for ``identity`` with an embedded SCT."""
        now = datetime.datetime.now(datetime.UTC)
        raw_issuer = issuer.encode()
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([]))
            .issuer_name(self.ca.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=1))
            .not_valid_after(now + datetime.timedelta(minutes=10))
            .add_extension(key_usage(digital_signature=True), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self.ca_key.public_key()),
                critical=False,
            )
            .add_extension(x509.SubjectAlternativeName([x509.RFC822Name(identity)]), True)
            .add_extension(x509.UnrecognizedExtension(_ISSUER_V1, raw_issuer), critical=False)
            .add_extension(
                x509.UnrecognizedExtension(
                    _ISSUER_V2, b"\x0c" + bytes([len(raw_issuer)]) + raw_issuer
                ),
                critical=False,
            )
        )
        # The CT log signs the precertificate: the same TBS without the SCT extension.
        tbs = builder.sign(self.ca_key, hashes.SHA256()).tbs_certificate_bytes
        sct = self._sct(tbs, int(now.timestamp() * 1000))
        ext = x509.UnrecognizedExtension(_SCT_LIST, _der_octets(sct))
        return builder.add_extension(ext, critical=False).sign(self.ca_key, hashes.SHA256())

    def _sct(self, tbs: bytes, millis: int) -> bytes:
        issuer_key_hash = hashlib.sha256(_spki(self.ca_key)).digest()
        signed = (
            struct.pack("!BBQH", 0, 0, millis, 1)
            + issuer_key_hash
            + len(tbs).to_bytes(3, "big")
            + tbs
            + struct.pack("!H", 0)
        )
        sig = _sign(self.ct_key, signed)
        log_id = hashlib.sha256(_spki(self.ct_key)).digest()
        one = struct.pack("!B32sQH", 0, log_id, millis, 0) + struct.pack("!BBH", 4, 3, len(sig))
        one += sig
        return struct.pack("!HH", len(one) + 2, len(one)) + one

    def log_entry(self, envelope: dict[str, Any], cert: x509.Certificate) -> dict[str, Any]:
        """The transparency log entry of ``envelope`` as the first leaf of a new log."""
        cert_pem = cert.public_bytes(serialization.Encoding.PEM)
        body = {
            "apiVersion": "0.0.1",
            "kind": "dsse",
            "spec": {
                "envelopeHash": {
                    "algorithm": "sha256",
                    "value": hashlib.sha256(json.dumps(envelope).encode()).hexdigest(),
                },
                "payloadHash": {
                    "algorithm": "sha256",
                    "value": hashlib.sha256(base64.b64decode(envelope["payload"])).hexdigest(),
                },
                "signatures": [
                    {"signature": s["sig"], "verifier": _b64(cert_pem)}
                    for s in envelope["signatures"]
                ],
            },
        }
        canonical = json.dumps(body, separators=(",", ":")).encode()
        log_id = hashlib.sha256(_spki(self.log_key)).digest()
        integrated = int(datetime.datetime.now(datetime.UTC).timestamp())
        promise = rfc8785.dumps(
            {
                "body": _b64(canonical),
                "integratedTime": integrated,
                "logID": log_id.hex(),
                "logIndex": 0,
            }
        )
        root = hashlib.sha256(b"\x00" + canonical).digest()  # a one-leaf tree
        note = f"rekor.test.invalid - 1\n1\n{_b64(root)}\n"
        signed_note = _b64(log_id[:4] + _sign(self.log_key, note.encode()))
        return {
            "logIndex": "0",
            "logId": {"keyId": _b64(log_id)},
            "kindVersion": {"kind": "dsse", "version": "0.0.1"},
            "integratedTime": str(integrated),
            "inclusionPromise": {"signedEntryTimestamp": _b64(_sign(self.log_key, promise))},
            "inclusionProof": {
                "logIndex": "0",
                "rootHash": _b64(root),
                "treeSize": "1",
                "hashes": [],
                "checkpoint": {"envelope": f"{note}\n\u2014 rekor.test.invalid {signed_note}\n"},
            },
            "canonicalizedBody": _b64(canonical),
        }

    def sign(self, skill: Path, signature_file: str, identity: str, issuer: str) -> None:
        """Sign ``skill`` as ``model-signing`` does, then turn the bundle into a keyless one:
        the certificate alone as verification material, plus the log entry."""
        import model_signing

        key = ec.generate_private_key(ec.SECP256R1())
        cert = self.certificate(key, identity, issuer)
        work = skill.parent / f".{skill.name}-signing"
        work.mkdir()
        key_pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        ca_pem = self.ca.public_bytes(serialization.Encoding.PEM)
        hashing = model_signing.hashing.Config().set_ignored_paths(
            paths=[signature_file], ignore_git_paths=True
        )
        model_signing.signing.Config().set_hashing_config(hashing).use_certificate_signer(
            private_key=_pem(work / "leaf.key", key_pem),
            signing_certificate=_pem(
                work / "leaf.pem", cert.public_bytes(serialization.Encoding.PEM)
            ),
            certificate_chain=[_pem(work / "ca.pem", ca_pem)],
        ).sign(skill, skill / signature_file)
        bundle = json.loads((skill / signature_file).read_text())
        bundle["mediaType"] = _BUNDLE_V03
        bundle["verificationMaterial"] = {
            "certificate": {"rawBytes": _b64(cert.public_bytes(serialization.Encoding.DER))},
            "tlogEntries": [self.log_entry(bundle["dsseEnvelope"], cert)],
        }
        (skill / signature_file).write_text(json.dumps(bundle))
        for f in work.iterdir():
            f.unlink()
        work.rmdir()


def _der_octets(data: bytes) -> bytes:
    n = len(data)
    if n < 0x80:
        return b"\x04" + bytes([n]) + data
    size = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return b"\x04" + bytes([0x80 | len(size)]) + size + data
