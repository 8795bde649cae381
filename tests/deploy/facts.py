"""Reads the deployment files for tests/e2e/deploy.rs and prints them as one JSON object:
every Kubernetes manifest's documents (PyYAML) and the Dockerfile's instructions
(dockerfile-parse, the parser of Red Hat's container tooling).

    python facts.py DEPLOY_DIR
"""

from __future__ import annotations

import json
import pathlib
import sys

import yaml
from dockerfile_parse import DockerfileParser


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    deploy = pathlib.Path(sys.argv[1])
    manifests = {
        path.name: list(yaml.safe_load_all(path.read_text()))
        for path in sorted((deploy / "kubernetes").glob("*.yaml"))
    }
    parser = DockerfileParser(path=str(deploy / "Dockerfile"))
    instructions = [
        {"instruction": item["instruction"], "value": item["value"]} for item in parser.structure
    ]
    print(json.dumps({"manifests": manifests, "dockerfile": instructions, "baseimage": parser.baseimage}))


if __name__ == "__main__":
    main()
