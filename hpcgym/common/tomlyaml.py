"""Reading TOML files, and YAML files with PyYAML: machine descriptions, sweep specs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hpcgym.common.errors import InvalidConfigError


def read_toml_or_yaml(path: Path, what: str) -> Any:
    """The parsed contents of a TOML file, or of a YAML file (``.yaml``, ``.yml``) with PyYAML.

    Raises:
        InvalidConfigError: the file does not parse, or YAML without PyYAML; the message
            names the file (and ``what`` it holds).
        FileNotFoundError: the file does not exist.
    """
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() in (".yaml", ".yml"):
        try:
            import yaml  # type: ignore[import-untyped]
        except ImportError:
            raise InvalidConfigError(
                f"{path}: reading a YAML {what} needs PyYAML (pip install pyyaml); or write it as TOML"
            ) from None
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as err:
            raise InvalidConfigError(f"{path}: not valid YAML: {err}") from err
    toml = _toml_module()
    try:
        return toml.loads(text)
    except toml.TOMLDecodeError as err:
        raise InvalidConfigError(f"{path}: not valid TOML: {err}") from err


def _toml_module() -> Any:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        try:
            import tomli as tomllib  # type: ignore[import-not-found, no-redef]
        except ImportError:
            raise InvalidConfigError("reading TOML needs Python 3.11 or the tomli package") from None
    return tomllib
