"""Validates ATIF trajectories with Harbor's own pydantic models (test/support/harbor-venv.ts runs this).

stdin: a JSON object {name: trajectory}. stdout: a JSON object {name: {"ok": bool, "errors": [str], "roundtrip": bool}}.
`errors` are Harbor's TrajectoryValidator messages (it wraps the Trajectory model); `roundtrip` is whether Harbor's
own serialization of the parsed model (to_json_dict, as Harbor writes trajectory.json) equals the input, i.e. Harbor
read every field as we meant it, coerced and dropped nothing.
"""

import json
import sys

from harbor.models.trajectories import Trajectory
from harbor.utils.trajectory_validator import TrajectoryValidator


def check(document):
    validator = TrajectoryValidator()
    ok = validator.validate(document)
    roundtrip = ok and Trajectory.model_validate(document).to_json_dict() == document
    return {"ok": ok, "errors": validator.get_errors(), "roundtrip": roundtrip}


def main():
    documents = json.load(sys.stdin)
    json.dump({name: check(document) for name, document in documents.items()}, sys.stdout)


if __name__ == "__main__":
    main()
