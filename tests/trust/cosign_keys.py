"""Key pairs and blob signatures in cosign's keyed form, made with the `cryptography`
package (OpenSSL): an implementation independent of the host's, so the tests show that
toolhost accepts what cosign writes and refuses the rest.

    cosign_keys.py keygen DIR          DIR/cosign.pub (PEM SubjectPublicKeyInfo, P-256)
                                       and DIR/cosign.key (PEM PKCS#8, unencrypted)
    cosign_keys.py sign KEY FILE SIG   SIG: base64 of the DER ECDSA-SHA256 signature of
                                       FILE's bytes, as `cosign sign-blob --key KEY
                                       --output-signature SIG FILE` writes it
"""

import base64
import pathlib
import sys

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec


def keygen(directory: pathlib.Path) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    directory.joinpath("cosign.key").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    directory.joinpath("cosign.pub").write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM,
            serialization.PublicFormat.SubjectPublicKeyInfo,
        )
    )


def sign(key_path: pathlib.Path, blob: pathlib.Path, signature: pathlib.Path) -> None:
    key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    der = key.sign(blob.read_bytes(), ec.ECDSA(hashes.SHA256()))
    signature.write_text(base64.b64encode(der).decode())


if __name__ == "__main__":
    match sys.argv[1:]:
        case ["keygen", directory]:
            keygen(pathlib.Path(directory))
        case ["sign", key, blob, out]:
            sign(pathlib.Path(key), pathlib.Path(blob), pathlib.Path(out))
        case _:
            sys.exit(__doc__)
