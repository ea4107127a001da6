"""Secret redaction: every secret is replaced by ``[REDACTED:<kind>]`` before text is written
to the vault.

Secret kinds (applied in this order; the first that matches names the redaction):

==========================  ==================================================================
kind                        what is redacted
==========================  ==================================================================
``pem_private_key``         a whole ``-----BEGIN … PRIVATE KEY-----`` … ``-----END … PRIVATE
                            KEY-----`` block (RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP … BLOCK),
                            multi-line; a BEGIN line without its END redacts to the end of text
``aws_access_key_id``       ``AKIA`` / ``ASIA`` + 16 upper-case letters or digits
``github_token``            ``ghp_`` ``gho_`` ``ghu_`` ``ghs_`` ``ghr_`` + 30 or more
                            alphanumerics, ``github_pat_`` + 30 or more word characters
``anthropic_api_key``       ``sk-ant-`` + 20 or more of ``[A-Za-z0-9_-]``
``openai_api_key``          ``sk-`` (incl. ``sk-proj-``, ``sk-svcacct-``) + 20 or more of
                            ``[A-Za-z0-9_-]`` containing at least one digit
``slack_token``             ``xoxa-`` ``xoxb-`` ``xoxp-`` ``xoxr-`` ``xoxs-`` + 10 or more
``google_api_key``          ``AIza`` + exactly 35 of ``[A-Za-z0-9_-]``
``stripe_live_key``         ``sk_live_`` / ``rk_live_`` + 16 or more alphanumerics
``jwt``                     ``eyJ…`` ``.`` ``ey…`` ``.`` signature (base64url segments)
``aws_secret_access_key``   a 40-character key assigned to ``aws_secret_access_key`` (also
                            ``AWS_SECRET_ACCESS_KEY``, ``aws-secret-access-key``,
                            ``SecretAccessKey``) with ``=`` or ``:``; only the value is redacted
``url_password``            the password in ``scheme://user:password@host``; scheme, user and
                            host are kept (``redis://:password@host`` too)
``bearer_token``            ``Authorization: Bearer <token>`` (token of 8 or more characters);
                            ``Authorization:`` and ``Bearer`` are kept
``basic_auth``              ``Authorization: Basic <base64>``; the header name is kept
``secret_assignment``       ``NAME=value``, ``export NAME="value"``, ``"NAME": "value"`` (JSON),
                            and ``NAME: value`` at the start of a line (YAML, headers, lists),
                            where NAME contains SECRET, TOKEN, PASSWORD, PASSWD, API_KEY, APIKEY,
                            PRIVATE_KEY, ACCESS_KEY or CLIENT_SECRET (case-insensitive); the name
                            is kept and only the value (inside its quotes, if quoted) is redacted
==========================  ==================================================================

A 40-hex git SHA matches none of these unless it is the value assigned to a secret name.

``secret_assignment`` name rules. A keyword may be glued to a prefix (``GITHUBTOKEN``,
``authToken``, ``clientSecret``) but must not run on into a longer word: ``tokenizer``,
``MAX_TOKENS``, ``passwords``, ``secretary`` are not secret names (``SECRETKEY`` is). Names that
describe a secret rather than hold one are skipped: a last part of count, budget, limit, length,
len, size, type, kind, url, uri, endpoint, file, path, dir, name, id, arn, ttl, timeout, expiry,
expires, expiration, env, var, header, prefix, policy, format, version (``SECRET_NAME``,
``TOKEN_URL``, ``PASSWORD_FILE``, ``token_budget``), or a first part of max, min or num.

Placeholder policy: for the context kinds (``aws_secret_access_key``, ``url_password``,
``bearer_token``, ``basic_auth``, ``secret_assignment``) a value is kept as written when it is
obviously not a secret:

* empty (``TOKEN=``, ``TOKEN=""``) or already a ``[REDACTED:…]`` marker;
* a template or variable reference: ``<your-token>``, ``${VAR}``, ``$VAR``, ``$(command)``,
  ``{{ var }}``, ``%VAR%``, and format fields ``{password}``, ``%s``, ``%(password)s``;
* only mask characters: ``xxx``, ``XXXX``, ``****``, ``...``, ``…``, ``###``, ``---``;
* a placeholder word (any case): changeme, change_me, change-me, placeholder, redacted, dummy,
  example, todo, tbd, none, null, nil, undefined, true, false; or anything starting with
  ``your_`` / ``your-`` (``your_api_key_here``);
* code rather than a value: a type name (str, string, bytes, int, bool, any, optional), a call or
  subscript (``getpass()``, ``os.environ["TOKEN"]``, ``Optional[str]``), a dotted reference
  (``settings.SECRET_KEY``), or the variable's own name (``token=token``,
  ``self.token = token``).

Literal words such as ``password`` or ``secret`` are *not* placeholders: redacting a weak value
costs nothing, keeping a real one does. Token-shaped kinds (AWS key ids, GitHub, Anthropic,
OpenAI, Slack, Google, Stripe, JWT, PEM) are always redacted, documentation examples included.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Redaction:
    """How many secrets of one kind were replaced."""

    kind: str
    count: int


# Keywords that make an assignment's name a secret name (see the module docstring).
_KEYWORD = r"(?:secret|token|passw(?:or)?d|api[_-]?key|private[_-]?key|access[_-]?key)"
_NAME_KEYWORD = re.compile(_KEYWORD, re.IGNORECASE)
# A name starts a run of name characters (so scanning stays linear) and contains a keyword.
_NAME = r"(?<![\w.-])(?=[\w.-]*?" + _KEYWORD + r")-{0,2}[A-Za-z_][\w.-]*+"
# The value: inside its quotes when quoted (an unclosed quote runs to the end of the line),
# otherwise a <template> / {{ template }} or up to whitespace, a quote or a backtick.
# Empty values never match.
_VALUE = (
    r"[ \t]*\*{0,2}[ \t]*[\"']?"
    r"(?P<secret>(?<=\")[^\"\n]+|(?<=')[^'\n]+"
    r"|(?<![\"'])(?:<[^<>\n]*>|\{\{[^{}\n]*\}\}|[^\s\"'`]+))"
)

_PEM = re.compile(
    r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:.*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|.*)",
    re.DOTALL,
)

SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("pem_private_key", _PEM),
    (
        "aws_access_key_id",
        re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Za-z])"),
    ),
    (
        "github_token",
        re.compile(
            r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,}+|github_pat_[A-Za-z0-9_]{30,}+)"
        ),
    ),
    ("anthropic_api_key", re.compile(r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,}+")),
    (
        "openai_api_key",
        re.compile(r"(?<![A-Za-z0-9_-])sk-(?!ant-)(?=[A-Za-z0-9_-]*?[0-9])[A-Za-z0-9_-]{20,}+"),
    ),
    ("slack_token", re.compile(r"(?<![A-Za-z0-9])xox[abprs]-[A-Za-z0-9-]{10,}+")),
    (
        "google_api_key",
        re.compile(r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),
    ),
    ("stripe_live_key", re.compile(r"(?<![A-Za-z0-9])[sr]k_live_[0-9A-Za-z]{16,}+")),
    (
        "jwt",
        re.compile(
            r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{4,}+\.ey[A-Za-z0-9_-]{4,}+\.[A-Za-z0-9_-]*+"
        ),
    ),
    (
        "aws_secret_access_key",
        re.compile(
            r"(?<![A-Za-z0-9])(?:aws[_-]?secret[_-]?access[_-]?key|secret[_-]?access[_-]?key)"
            r"[\"']?[ \t]*[:=][ \t]*[\"']?"
            r"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
            re.IGNORECASE,
        ),
    ),
    (
        "url_password",
        re.compile(
            r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*+://[^\s:/@?#]*+:"
            r"(?P<secret>[^\s/?#]+)@"
        ),
    ),
    (
        "bearer_token",
        re.compile(
            r"authorization[\"']?[ \t]*[:=][ \t]*[\"']?[ \t]*bearer[ \t]+"
            r"(?P<secret>[A-Za-z0-9._~+/-]{8,}+=*)",
            re.IGNORECASE,
        ),
    ),
    (
        "basic_auth",
        re.compile(
            r"authorization[\"']?[ \t]*[:=][ \t]*[\"']?[ \t]*basic[ \t]+"
            r"(?P<secret>[A-Za-z0-9+/]{8,}+=*)",
            re.IGNORECASE,
        ),
    ),
    (
        "secret_assignment",
        re.compile(
            # "NAME": value / 'NAME' = value, anywhere (JSON, dicts)
            r"(?:(?P<q>[\"'])(?P<qkey>" + _NAME + r")(?P=q)[ \t]*[:=](?![=:])"
            # NAME=value / export NAME="value", anywhere (.env, shell, code, CLI flags)
            r"|(?P<key>" + _NAME + r")[ \t]*=(?!=)"
            # NAME: value at the start of a line (YAML, headers, "- **Password**: …")
            r"|^[ \t]*+(?:[-*>#+][ \t]*)*(?P<lkey>" + _NAME + r")\*{0,2}[ \t]*:(?![:/=]))" + _VALUE,
            re.IGNORECASE | re.MULTILINE,
        ),
    ),
)

_CONTEXT_KINDS = frozenset(
    kind for kind, pattern in SECRET_PATTERNS if "secret" in pattern.groupindex
)

# Speed only: a kind's pattern runs only if one of its literals occurs in the text (casefolded
# for the case-insensitive kinds). Each literal is a substring of every match, so skipping is
# exact. secret_assignment never spans lines, so it runs only on lines that hold a keyword.
_HINTS: dict[str, tuple[bool, tuple[str, ...]]] = {
    "pem_private_key": (False, ("PRIVATE KEY",)),
    "aws_access_key_id": (False, ("AKIA", "ASIA")),
    "github_token": (False, ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    "anthropic_api_key": (False, ("sk-ant-",)),
    "openai_api_key": (False, ("sk-",)),
    "slack_token": (False, ("xox",)),
    "google_api_key": (False, ("AIza",)),
    "stripe_live_key": (False, ("k_live_",)),
    "jwt": (False, ("eyJ",)),
    "aws_secret_access_key": (True, ("access",)),
    "url_password": (False, ("://",)),
    "bearer_token": (True, ("bearer",)),
    "basic_auth": (True, ("basic",)),
    "secret_assignment": (True, ("secret", "token", "passw", "key")),
}

_PLACEHOLDER_WORDS = frozenset(
    {
        "changeme",
        "change_me",
        "change-me",
        "placeholder",
        "redacted",
        "dummy",
        "example",
        "todo",
        "tbd",
        "none",
        "null",
        "nil",
        "undefined",
        "true",
        "false",
        # type names: `token: str`, `password: string` are annotations, not values
        "str",
        "string",
        "bytes",
        "int",
        "bool",
        "any",
        "optional",
    }
)
_PLACEHOLDER = re.compile(
    r"\[REDACTED:[^\]]*\]"  # already redacted by an earlier kind
    r"|<[^<>]*>"  # <your-token>
    r"|\$\{.*|\$\(.*|\$[A-Za-z_]\w*|\{\{.*|%[A-Za-z_]\w*%"  # ${VAR} $(cmd) $VAR {{v}} %V%
    r"|\{[^{}]*\}|%(?:\([^)]*\))?[sd]"  # format fields: {password} %s %(password)s
    r"|[xX*.#\u2026\u2022-]+"  # xxx, ****, ..., …
    r"|your[_-].*"  # your_api_key_here
    r"|[A-Za-z_][\w.]*[(\[].*"  # getpass(), os.environ["X"], Optional[str]
    r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+",  # settings.SECRET_KEY
    re.IGNORECASE | re.DOTALL,
)

_NAME_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_DESCRIPTIVE_LAST = frozenset(
    {
        "count",
        "budget",
        "limit",
        "length",
        "len",
        "size",
        "type",
        "kind",
        "url",
        "uri",
        "endpoint",
        "file",
        "path",
        "dir",
        "name",
        "id",
        "arn",
        "ttl",
        "timeout",
        "expiry",
        "expires",
        "expiration",
        "env",
        "var",
        "header",
        "prefix",
        "policy",
        "format",
        "version",
    }
)
_DESCRIPTIVE_FIRST = frozenset({"max", "min", "num"})


def _is_placeholder(value: str) -> bool:
    value = value.strip()
    return (
        not value
        or value.lower() in _PLACEHOLDER_WORDS
        or _PLACEHOLDER.fullmatch(value) is not None
    )


def _is_secret_name(name: str) -> bool:
    """Apply the name rules of ``secret_assignment`` (see the module docstring)."""
    parts = [part.lower() for part in _NAME_PART.findall(name)]
    if not parts or parts[-1] in _DESCRIPTIVE_LAST or parts[0] in _DESCRIPTIVE_FIRST:
        return False
    for match in _NAME_KEYWORD.finditer(name):
        rest = name[match.end() :]
        if not rest or not rest[0].isalpha():
            return True
        if match.group()[-1].islower() and rest[0].isupper():  # camelCase boundary
            return True
        if rest[:3].lower() == "key":  # SECRETKEY, secretKey
            return True
    return False


def _replacer(kind: str, counts: dict[str, int]) -> Callable[[re.Match[str]], str]:
    marker = f"[REDACTED:{kind}]"
    if kind not in _CONTEXT_KINDS:

        def replace_all(match: re.Match[str]) -> str:
            counts[kind] = counts.get(kind, 0) + 1
            return marker

        return replace_all

    def replace_value(match: re.Match[str]) -> str:
        value = match.group("secret")
        if _is_placeholder(value):
            return match.group()
        if kind == "secret_assignment":
            name = match.group("qkey") or match.group("key") or match.group("lkey")
            # `token=token`, `self.token = token`: the variable's own name is code, not a value.
            own_names = {name.strip("-").lower(), name.rsplit(".", 1)[-1].lower()}
            if not _is_secret_name(name) or value.strip().lower() in own_names:
                return match.group()
        counts[kind] = counts.get(kind, 0) + 1
        start, end = match.span("secret")
        text = match.string
        return text[match.start() : start] + marker + text[end : match.end()]

    return replace_value


def redact_secrets(text: str) -> tuple[str, list[Redaction]]:
    """Replace each secret with ``[REDACTED:<kind>]``; return the text and counts per kind.

    Kinds are applied in ``SECRET_PATTERNS`` order and reported in that order, only those found.
    """
    counts: dict[str, int] = {}
    for kind, pattern in SECRET_PATTERNS:
        folded, hints = _HINTS.get(kind, (False, ("",)))  # no hints: always run
        haystack = text.casefold() if folded else text
        if not any(hint in haystack for hint in hints):
            continue
        replace = _replacer(kind, counts)
        if kind != "secret_assignment":
            text = pattern.sub(replace, text)
            continue
        lines = text.split("\n")
        for index, line in enumerate(lines):
            folded_line = line.casefold()
            if any(hint in folded_line for hint in hints):
                lines[index] = pattern.sub(replace, line)
        text = "\n".join(lines)
    return text, [Redaction(kind, count) for kind, count in counts.items()]
