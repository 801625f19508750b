"""Keep secrets out of everything the benchmark writes.

API keys reach litellm through the environment (``OPENAI_API_KEY``, ...) or
``--api-key``-style parameters, and providers sometimes echo them back in
error messages. Every log line, cache record, summary and error message the
runner writes goes through a ``Redactor`` first: it replaces the values of
secret-looking environment variables, explicitly registered secrets,
common key shapes (``sk-...``, ``Bearer ...``) and credentials in URLs
(``https://user:pw@host``, ``?token=...``) with ``[REDACTED]``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit

REDACTED = "[REDACTED]"
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|AUTH", re.IGNORECASE)
MIN_SECRET_LENGTH = 6
_SHAPES = (
    re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._\-~+/=]{8,}"),
    re.compile(r"(?i)(api[_-]?key[\"']?\s*[:=]\s*[\"']?)([^\s\"',}]{4,})"),
)
#: Credentials in URLs: the userinfo of ``scheme://user:password@host`` and
#: secret-looking query values (``?token=...``, ``&api_key=...``, ``&sig=...``).
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]{0,20}://)[^\s/@\"'<>]{1,256}@")
_SECRET_QUERY = re.compile(
    r"(?i)([?&;][a-z0-9_.\-]{0,40}(?:token|key|secret|password|passwd|pwd|auth|sig|signature|credential)"
    r"[a-z0-9_.\-]{0,40}=)[^&#\s\"'<>]+"
)


def secret_values(environ: Mapping[str, str] | None = None, extra: Iterable[str | None] = ()) -> list[str]:
    """Values of secret-looking environment variables plus ``extra``, longest first."""
    environ = os.environ if environ is None else environ
    found = {value for name, value in environ.items() if SECRET_NAME.search(name)}
    found.update(value for value in extra if value)
    return sorted((v for v in found if len(v) >= MIN_SECRET_LENGTH), key=len, reverse=True)


class Redactor:
    """Replace secrets in strings and (recursively) in JSON-like objects."""

    def __init__(self, extra: Iterable[str | None] = (), environ: Mapping[str, str] | None = None) -> None:
        self._environ = environ
        self._extra = [value for value in extra if value]
        self._secrets = secret_values(environ, self._extra)

    def add(self, secret: str | None) -> None:
        """Register one more secret value (e.g. an ``api_key`` given on the command line)."""
        if secret and len(secret) >= MIN_SECRET_LENGTH and secret not in self._secrets:
            self._extra.append(secret)
            self._secrets = secret_values(self._environ, self._extra)

    def text(self, value: str) -> str:
        for secret in self._secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        # Each shape is tried only when the text holds its fixed part (case-folded as the regexes fold it:
        # the Kelvin sign lowers to "k"): scanning every log line three times cost more than the game.
        lowered = value.lower()
        if "sk-" in value:
            value = _SHAPES[0].sub(REDACTED, value)
        if "bearer" in lowered:
            value = _SHAPES[1].sub("Bearer " + REDACTED, value)
        if "key" in lowered:
            value = _SHAPES[2].sub(lambda m: m.group(1) + REDACTED, value)
        if "://" in value:
            value = _URL_USERINFO.sub(lambda m: m.group(1) + REDACTED + "@", value)
        return _SECRET_QUERY.sub(lambda m: m.group(1) + REDACTED, value) if "=" in value else value

    def add_url(self, url: str | None) -> None:
        """Register the credentials written in ``url`` (userinfo, secret-looking query values)."""
        if not url:
            return

        try:
            parts = urlsplit(url)
        except ValueError:
            return
        self.add(parts.password)
        if parts.username and parts.password is None:
            self.add(parts.username)
        for name, value in parse_qsl(parts.query):
            if SECRET_NAME.search(name) or name.lower() in ("sig", "signature", "pwd", "passwd"):
                self.add(value)

    def json_line(self, line: str) -> str:
        """Redact one serialized JSON line in a single pass (secrets matched in their JSON-escaped form).

        The replacement text has no characters JSON escapes, so the line stays valid JSON.
        """
        for secret in self._secrets:
            escaped = json.dumps(secret, ensure_ascii=True)[1:-1]
            if escaped in line:
                line = line.replace(escaped, REDACTED)
        return self.text(line)

    def __call__(self, value: Any) -> Any:
        """A copy of ``value`` with every string redacted (dict keys included)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {self(k) if isinstance(k, str) else k: self(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self(v) for v in value]
        return value


def redact(value: Any) -> Any:
    """Redact ``value`` with the secrets currently in the environment."""
    return Redactor()(value)
