"""Cosign's image signatures in a registry, written and checked with `cryptography` and
the OCI distribution API (urllib): an implementation independent of the host's, in the
layout `cosign sign --key` writes and `cosign verify --key` reads.

    cosign_registry.py sign REGISTRY REPOSITORY DIGEST KEY
        signs the manifest DIGEST of REPOSITORY with KEY (PEM PKCS#8): a simple-signing
        payload, its signature in the layer's annotation, under the tag
        sha256-<hex>.sig (plain HTTP registry, no credentials)
    cosign_registry.py verify REGISTRY REPOSITORY DIGEST PUB
        prints "verified" when a signature at that tag is PUB's over a payload naming
        DIGEST, else what is wrong, and exits 1
"""

import base64
import hashlib
import json
import sys
import urllib.request

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

PAYLOAD_TYPE = "application/vnd.dev.cosign.simplesigning.v1+json"
ANNOTATION = "dev.cosignproject.cosign/signature"
MANIFEST_TYPE = "application/vnd.oci.image.manifest.v1+json"


def tag_of(digest: str) -> str:
    return digest.replace(":", "-") + ".sig"


def upload(registry: str, repository: str, blob: bytes) -> dict:
    digest = "sha256:" + hashlib.sha256(blob).hexdigest()
    start = urllib.request.Request(f"http://{registry}/v2/{repository}/blobs/uploads/", method="POST")
    location = urllib.request.urlopen(start).headers["Location"]
    if location.startswith("/"):
        location = f"http://{registry}{location}"
    separator = "&" if "?" in location else "?"
    put = urllib.request.Request(f"{location}{separator}digest={digest}", data=blob, method="PUT")
    put.add_header("Content-Type", "application/octet-stream")
    urllib.request.urlopen(put)
    return {"digest": digest, "size": len(blob)}


def sign(registry: str, repository: str, digest: str, key_path: str) -> None:
    key = serialization.load_pem_private_key(open(key_path, "rb").read(), password=None)
    payload = json.dumps({
        "critical": {
            "identity": {"docker-reference": f"{registry}/{repository}"},
            "image": {"docker-manifest-digest": digest},
            "type": "cosign container image signature",
        },
        "optional": None,
    }).encode()
    signature = base64.b64encode(key.sign(payload, ec.ECDSA(hashes.SHA256()))).decode()
    layer = upload(registry, repository, payload)
    config = upload(registry, repository, json.dumps({
        "architecture": "", "os": "", "config": {},
        "rootfs": {"type": "layers", "diff_ids": [layer["digest"]]},
    }).encode())
    manifest = json.dumps({
        "schemaVersion": 2,
        "mediaType": MANIFEST_TYPE,
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", **config},
        "layers": [{"mediaType": PAYLOAD_TYPE, **layer, "annotations": {ANNOTATION: signature}}],
    }).encode()
    url = f"http://{registry}/v2/{repository}/manifests/{tag_of(digest)}"
    put = urllib.request.Request(url, data=manifest, method="PUT")
    put.add_header("Content-Type", MANIFEST_TYPE)
    urllib.request.urlopen(put)


def verify(registry: str, repository: str, digest: str, pub_path: str) -> str:
    public = serialization.load_pem_public_key(open(pub_path, "rb").read())
    request = urllib.request.Request(f"http://{registry}/v2/{repository}/manifests/{tag_of(digest)}")
    request.add_header("Accept", MANIFEST_TYPE)
    manifest = json.loads(urllib.request.urlopen(request).read())
    for layer in manifest["layers"]:
        if layer["mediaType"] != PAYLOAD_TYPE:
            continue
        url = f"http://{registry}/v2/{repository}/blobs/{layer['digest']}"
        payload = urllib.request.urlopen(url).read()
        if "sha256:" + hashlib.sha256(payload).hexdigest() != layer["digest"]:
            return "a payload does not match its digest"
        try:
            public.verify(base64.b64decode(layer["annotations"][ANNOTATION]), payload, ec.ECDSA(hashes.SHA256()))
        except InvalidSignature:
            continue
        critical = json.loads(payload)["critical"]
        if critical["image"]["docker-manifest-digest"] == digest and critical["type"] == "cosign container image signature":
            return "verified"
    return "no valid signature"


if __name__ == "__main__":
    match sys.argv[1:]:
        case ["sign", registry, repository, digest, key]:
            sign(registry, repository, digest, key)
        case ["verify", registry, repository, digest, pub]:
            said = verify(registry, repository, digest, pub)
            print(said)
            sys.exit(0 if said == "verified" else 1)
        case _:
            sys.exit(__doc__)
