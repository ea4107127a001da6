"""Prototype redactor: a library's provider plugins plus hand-written rules for what it misses.

    from prototype import redact, redact_rules_only
    redact(text) -> (new_text, number_of_redactions)

``RULES`` is a list of ``(kind, regex)``; every regex has a named group ``secret`` marking only
the value to replace (a scheme, user name, header or variable name around it is kept).  Context
rules (names, headers, prose) go through :func:`looks_like_value`, which skips placeholders and
code.  The library layer is Yelp detect-secrets with its provider-format plugins only (no keyword
and no entropy plugins, which cost most of its false positives; no IP detector).
"""

# requires-dist = detect-secrets

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Callable, Iterable
from typing import Any

MARK = "[REDACTED]"

# ----------------------------------------------------------------------------- provider formats
# Fixed prefixes or shapes that are documented by the provider; no context needed.

_B = r"(?<![\w-])"  # token start: not glued to a word
_E = r"(?![\w-])"  # token end

PROVIDER_RULES: list[tuple[str, str]] = [
    (
        "aws_access_key_id",
        r"(?<![A-Z0-9])(?P<secret>(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)"
        r"[A-Z0-9]{16})(?![A-Z0-9])",
    ),
    ("aws_session_token", r"(?<![\w+/])(?P<secret>(?:FwoGZXIvYXdzE|IQoJb3JpZ2luX2Vj)[\w+/=]{40,})"),
    ("github_token", _B + r"(?P<secret>gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{60,})"),
    (
        "gitlab_token",
        _B + r"(?P<secret>gl(?:pat|ptt|rt|dt|cbt|oas|soat|ft|imt|agent|ffct|rtr)-[\w-]{20,}"
        r"(?:\.[0-9a-z]{2}\.[0-9a-z]{7,})?|GR1348941[\w-]{20,})",
    ),
    ("anthropic_api_key", _B + r"(?P<secret>sk-ant-[\w-]{20,})"),
    (
        "openai_like_key",
        _B + r"(?P<secret>sk-(?:proj-|svcacct-|admin-|or-v1-)?"
        r"(?=[\w-]*\d)[\w-]{20,})",
    ),
    ("huggingface_token", _B + r"(?P<secret>hf_[A-Za-z]{30,}|api_org_[A-Za-z]{30,})" + _E),
    ("groq_api_key", _B + r"(?P<secret>gsk_[A-Za-z0-9]{48,})"),
    ("replicate_api_token", _B + r"(?P<secret>r8_[A-Za-z0-9]{37})" + _E),
    ("npm_token", _B + r"(?P<secret>npm_[A-Za-z0-9]{36})" + _E),
    ("pypi_token", _B + r"(?P<secret>pypi-AgE[\w-]{50,})"),
    ("rubygems_api_key", _B + r"(?P<secret>rubygems_[a-f0-9]{48})"),
    ("docker_pat", _B + r"(?P<secret>dckr_(?:pat|oat)_[\w-]{20,})"),
    (
        "slack_token",
        _B + r"(?P<secret>xox[abposre]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]{32,})",
    ),
    ("slack_webhook", r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[\w/-]{20,})"),
    ("discord_webhook", r"discord(?:app)?\.com/api/webhooks/(?P<secret>\d+/[\w-]{40,})"),
    ("teams_webhook", r"\.webhook\.office\.com/webhookb2/(?P<secret>[\w@/-]{40,})"),
    (
        "discord_bot_token",
        r"(?<![\w.-])(?P<secret>[MNO][\w-]{23,25}\.[\w-]{6}\.[\w-]{27,38})(?![\w-])",
    ),
    ("telegram_bot_token", r"(?<![\d:])(?P<secret>\d{8,10}:AA[\w-]{33})(?![\w-])"),
    ("sendgrid_api_key", _B + r"(?P<secret>SG\.[\w-]{22}\.[\w-]{43})"),
    (
        "mailgun_api_key",
        _B + r"(?P<secret>key-[a-f0-9]{32}|[a-f0-9]{32}-[a-f0-9]{8}-[a-f0-9]{8})" + _E,
    ),
    ("mailchimp_api_key", _B + r"(?P<secret>[a-f0-9]{32}-us\d{1,2})" + _E),
    ("brevo_api_key", _B + r"(?P<secret>xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16})"),
    ("twilio_api_key", r"(?<![\w])(?P<secret>SK[a-f0-9]{32})(?![\w])"),
    (
        "stripe_key",
        _B + r"(?P<secret>(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}|"
        r"whsec_[A-Za-z0-9+/=]{24,})",
    ),
    ("square_token", _B + r"(?P<secret>sq0(?:atp|csp)-[\w-]{22,43}|EAAA[\w-]{60})"),
    ("shopify_token", _B + r"(?P<secret>shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32})"),
    ("digitalocean_token", _B + r"(?P<secret>do[opr]_v1_[a-f0-9]{64})"),
    ("google_api_key", _B + r"(?P<secret>AIza[\w-]{35})" + _E),
    ("google_oauth_client_secret", _B + r"(?P<secret>GOCSPX-[\w-]{28})"),
    ("google_oauth_token", r"(?<![\w./-])(?P<secret>ya29\.[\w-]{20,}|1//0[\w-]{40,})"),
    ("firebase_fcm_key", _B + r"(?P<secret>AAAA[\w-]{7}:APA91b[\w-]{100,})"),
    ("azure_ad_client_secret", r"(?<![\w~.-])(?P<secret>[\w~.-]{3}\dQ~[\w~.-]{31,34})(?![\w~.-])"),
    ("heroku_api_key", _B + r"(?P<secret>HRKU-[\w-]{20,})"),
    ("atlassian_api_token", _B + r"(?P<secret>ATATT3[\w=-]{50,})"),
    ("bitbucket_app_password", _B + r"(?P<secret>ATBB[A-Za-z0-9]{32,})"),
    ("linear_api_key", _B + r"(?P<secret>lin_(?:api|oauth)_[A-Za-z0-9]{40})"),
    ("notion_token", _B + r"(?P<secret>secret_[A-Za-z0-9]{43}|ntn_\d{11}[A-Za-z0-9]{35})" + _E),
    (
        "doppler_token",
        _B
        + r"(?P<secret>dp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_-]{2,35}\.)?[A-Za-z0-9]{40,44})",
    ),
    ("vault_token", r"(?<![\w.])(?P<secret>hv[sbr]\.[\w-]{24,})"),
    ("terraform_cloud_token", _B + r"(?P<secret>[A-Za-z0-9]{14}\.atlasv1\.[\w-]{60,})"),
    ("pulumi_token", _B + r"(?P<secret>pul-[a-f0-9]{40})"),
    ("postman_api_key", _B + r"(?P<secret>PMAK-[a-f0-9]{24}-[a-f0-9]{34})"),
    ("age_secret_key", r"(?P<secret>AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})"),
    ("databricks_token", _B + r"(?P<secret>dapi[a-f0-9]{32}(?:-\d)?)" + _E),
    ("new_relic_key", _B + r"(?P<secret>NRAK-[A-Z0-9]{27}|NRII-[\w-]{32}|[a-z0-9]{36}NRAL)" + _E),
    ("sentry_token", _B + r"(?P<secret>sntry[us]_[\w=+/-]{40,})"),
    ("sentry_dsn", r"\bhttps?://(?P<secret>[a-f0-9]{32})(?::[a-f0-9]{32})?@[\w.-]+/\d+"),
    ("grafana_token", _B + r"(?P<secret>glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}|glc_[\w+/]{32,}={0,2})"),
    ("facebook_access_token", _B + r"(?P<secret>EAA[BCGI][A-Za-z0-9]{100,})"),
    ("twitter_bearer_token", r"(?P<secret>A{21}[A-Za-z0-9%]{30,})"),
    ("cloudflare_origin_ca_key", _B + r"(?P<secret>v1\.0-[a-f0-9]{24}-[a-f0-9]{146})"),
    ("jwt", r"(?<![\w-])(?P<secret>eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{16,})"),
    # azure: the key inside a connection string, and the signature of a SAS URL
    (
        "azure_connection_key",
        r"(?i)\b(?:AccountKey|SharedAccessKey|SharedSecretValue)\s*=\s*"
        r"(?P<secret>[A-Za-z0-9+/]{20,}={0,2})",
    ),
    ("azure_sas_signature", r"[?&;]sig=(?P<secret>[\w%+/=-]{16,})"),
]

# ----------------------------------------------------------------------------- context rules
# Values recognised by what stands around them; each value goes through looks_like_value().

_PW_CHARS = r"[^\s'\"`]"
CONTEXT_RULES: list[tuple[str, str]] = [
    (
        "url_password",
        r"\b[a-z][a-z0-9+.-]*://[^\s:/@'\"<>]*:(?P<secret>[^\s/@'\"<>]{3,}?)@(?=[\w.-]+(?:[:/?\s'\"]|$))",
    ),
    ("basic_auth", r"(?i)\bBasic\s+(?P<secret>[A-Za-z0-9+/]{8,}={0,2})(?![\w+/=])"),
    ("bearer_token", r"(?i)\bBearer\s+(?P<secret>[\w.~+/-]{16,}=*)"),
    (
        "auth_header",
        r"(?im)(?:^|[\s{'\"])(?:Authorization|X-Auth-Key|X-Api-Key|Api-Key|X-Vault-Token|"
        r"PRIVATE-TOKEN|X-Shopify-Access-Token|DD-API-KEY|DD-APPLICATION-KEY)['\"]?\s*:\s*['\"]?"
        r"(?:token\s+|key=|SSWS\s+)?(?P<secret>[\w.~+/=-]{16,})",
    ),
    (
        "query_token",
        r"(?i)[?&#](?:access_token|refresh_token|id_token|token|api_key|apikey|key|client_secret|"
        r"password|passwd|circle-token|auth|sig|signature)=(?P<secret>[^&\s#\"'<>]{8,})",
    ),
    (
        "mysql_password_flag",
        r"\bmysql(?:dump|admin|import|sh)?\b[^\n]*?\s-p(?P<secret>" + _PW_CHARS + r"+)",
    ),
    (
        "cli_password_flag",
        r"(?:\bsshpass\s+-p\s*|\b(?:docker|podman|helm|oras)\s+(?:registry\s+)?login\b[^\n]*?\s-p\s+|"
        r"\bredis-cli\b[^\n]*?\s-a\s+|\blogin\s+-p\s+|\s-p\s+(?=\S*\d)(?=[^\n]*--tenant))"
        r"['\"]?(?P<secret>" + _PW_CHARS + r"{4,})",
    ),
    (
        "long_flag",
        r"(?i)(?<![\w-])--(?:password|passwd|pass|token|access-token|auth-token|api-key|apikey|"
        r"client-secret|secret|postman-api-key)(?:=|\s+)['\"]?(?P<secret>" + _PW_CHARS + r"{6,})",
    ),
    (
        "user_colon_password",
        r"(?:\bcurl\b[^\n]*?\s(?:-u|--user)|\bClient\()\s*=?\s*['\"]?[^\s:'\"]+['\"]?\s*[:,]\s*['\"]?"
        r"(?P<secret>" + _PW_CHARS + r"{6,})",
    ),
    ("conninfo_password", r"(?i)\bpassword=(?P<secret>[^\s'\";&]+)"),
]

# NAME = value, NAME: value, "NAME": "value", export NAME='value' -- NAME judged by its parts.
_ASSIGN = re.compile(
    r"""(?P<name>(?<![\w.-])[A-Za-z_][\w.-]*)['"]?\]?[ \t]*(?::=|=>|=|:)[ \t]*"""
    r"""(?:(?P<q>['"])(?P<qv>[^'"\n]+)(?P=q)|(?P<v>[^\s'",;}{)\]]+))""",
)
_SECRET_PARTS = {
    "password",
    "passwd",
    "pass",
    "passphrase",
    "pwd",
    "pw",
    "secret",
    "token",
    "apikey",
    "secretkey",
    "privatekey",
    "accesskey",
    "credential",
    "credentials",
    "secretkeybase",
    "dsn",
}
# a name part that ends with one of these holds a secret too (PGPASSWORD, MYSQL_PWD, authToken)
_SECRET_SUFFIXES = ("password", "passwd", "passphrase", "pwd", "secret", "token", "apikey")
_SECRET_PAIRS = {
    ("api", "key"),
    ("access", "key"),
    ("private", "key"),
    ("license", "key"),
    ("app", "key"),
    ("auth", "key"),
    ("signing", "key"),
    ("master", "key"),
    ("account", "key"),
    ("client", "secret"),
    ("encryption", "key"),
    ("server", "key"),
    ("application", "key"),
    ("admin", "password"),
}
_DESCRIPTIVE_LAST = {
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
    "field",
    "param",
    "hash",
    "min",
    "max",
    "regex",
    "pattern",
    "label",
    "hint",
    "placeholder",
    "reset",
    "strength",
    "changed",
    "required",
    "enabled",
    "validation",
    "help",
}
_NAME_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def is_secret_name(name: str) -> bool:
    parts = [p.lower() for p in _NAME_PART.findall(name.split(".")[-1])]
    if not parts or parts[-1] in _DESCRIPTIVE_LAST or parts[0] in {"max", "min", "num", "is"}:
        return False
    if any(p in _SECRET_PARTS or p.endswith(_SECRET_SUFFIXES) for p in parts):
        return True
    return any(pair in _SECRET_PAIRS for pair in zip(parts, parts[1:], strict=False))


# Prose: "the admin password is X", "passwd is X", "secret X", "login: user / X", "key X by".
_PROSE = re.compile(
    r"(?i)(?<![a-z0-9])(?:pass(?:word|wd|phrase)?|pw|pwd|secret(?:\s+(?:access\s+)?key)?|"
    r"api[\s_-]?key|token|key|creds?|credentials)(?![a-z])(?:\s*\([^)\n]{0,30}\))?"
    r"(?:[^\n.;`'\"]{0,40}?(?:\b(?:is|was|to|are)\b|[:=]|->)|\s*[:=]|\s*->|)\s*"
    r"['\"`]?(?P<secret>[^\s'\"`,;()]{8,})"
)
# "login for the dashboard: admin / s3cret-pw", "creds -> AKIA... / wJalr..."
_USER_SLASH = re.compile(
    r"(?i)\b(?:login|logins|creds?|credentials|account)\b[^\n]{0,50}?(?::|->)\s*"
    r"[\w.@+-]+\s+/\s+(?P<secret>[^\s'\"`,;()]{6,})"
)
# ~/.pgpass lines (host:port:database:user:password), when the text names the file
_PGPASS = re.compile(r"(?m)[\w.*-]+:(?:\d+|\*):[\w*.-]+:[\w*.-]+:(?P<secret>[^\s:]\S*)$")
# docker config.json / .npmrc: "auth": "<base64 of user:password>", _auth=<base64>
_AUTH_B64 = re.compile(r"(?i)[\"']?_?auth[\"']?\s*[:=]\s*[\"']?(?P<secret>[A-Za-z0-9+/]{8,}={0,2})")
# a hex key right after the word that names it: "api key: 6c3b...", "secret 8f3k..."
_HEX_AFTER_KEYWORD = re.compile(
    r"(?i)\b(?:api[\s_-]?key|app[\s_-]?key|key|secret|token|password|passwd|license[\s_-]?key)"
    r"(?:[^\n.;]{0,40}?\b(?:is|was)\s+|\s*(?:[:=]|->)\s*|\s+)['\"]?"
    r"(?P<secret>(?-i:[0-9a-f]{20,64}))\b"  # lower-case hex: upper is a GPG fingerprint
)
# 40 base64 characters with a / or +: the shape of an AWS secret access key, when the text
# talks about AWS or secrets.
_AWS_SECRET = re.compile(r"(?<![\w+/=])(?P<secret>(?=[\w+/]*[+/])[A-Za-z0-9+/]{40})(?![\w+/=])")
_AWS_CONTEXT = re.compile(r"(?i)aws|secret|s3|iam|boto|access key")

_PEM = re.compile(
    r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?P<secret>.*?)"
    r"(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    re.DOTALL,
)

_PLACEHOLDER_WORDS = {
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
    "password",
    "passwd",
    "pass",
    "secret",
    "token",
    "xxx",
    "user",
    "username",
    "string",
    "str",
    "bytes",
    "int",
    "bool",
    "any",
    "optional",
    "required",
    "hidden",
    "masked",
    "sensitive",
    "test",
    "foo",
    "bar",
}
_CODE = re.compile(
    r"^(?:\$\{?\w+\}?|\$\(.*\)|\{\{.*\}\}|%\w+%|\{[\w.]*\}|%s|%\(\w+\)s|<[^>]*>|"
    r"[\w.]+\(.*\)?|[\w.]+\[.*\]?|[A-Za-z_]+(?:\.[A-Za-z_]+)+|[*x.…#-]+|your[_-].*|"
    r"\[REDACTED.*|urn:.*|\d{1,10}|[a-z]{1,7})$",
    re.IGNORECASE,
)


def entropy(value: str) -> float:
    counts = {c: value.count(c) for c in set(value)}
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def looks_like_value(value: str, strict: bool = False) -> bool:
    """False for placeholders, code references and plain words; ``strict`` for prose."""
    v = value.strip("'\"`")
    if len(v) < 4 or v.lower() in _PLACEHOLDER_WORDS or _CODE.match(v):
        return False
    if re.fullmatch(r"[A-Z]?[a-z]{1,11}[.,:!]?", v):  # a plain word: "Updated.", "classic"
        return False
    if strict:
        classes = sum(bool(re.search(p, v)) for p in (r"[a-z]", r"[A-Z]", r"\d", r"[^\w]"))
        long_random = len(v) >= 20 and re.search(r"[a-zA-Z]", v) and entropy(v) >= 3.5
        if len(v) < 8 or not re.search(r"\d", v) or (classes < 3 and not long_random):
            return False
        if "<" in v or ">" in v or v.startswith("-"):
            return False
        if re.fullmatch(
            r"v?\d+(?:\.\d+)+\S*|[0-9a-f]{7,31}|[0-9a-f]{40}|[0-9A-F]{16}|[0-9A-F]{40}|"
            r"(?:arn|urn):\S+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[\w.-]+@[\w.-]+|\S*://\S*|"
            r"[\w./-]*/[\w./-]*|[\w-]+\.(?:js|ts|py|md|json|ya?ml|rst|txt)",
            v,
        ):
            return False
        if entropy(v) < 2.8:
            return False
    return True


_IDENT = re.compile(r"[A-Za-z_][A-Za-z_]*")


def _names_itself(name: str, value: str) -> bool:
    """``token = newToken``, ``password: userPassword``: a variable, not a value."""
    low = value.lower()
    return any(part.lower() in low for part in _NAME_PART.findall(name) if len(part) > 2)


def _basic_ok(value: str) -> bool:
    try:
        return b":" in base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False


_COMPILED = [(k, re.compile(p)) for k, p in PROVIDER_RULES]
_COMPILED_CTX = [(k, re.compile(p)) for k, p in CONTEXT_RULES]

Span = tuple[int, int, str]


def rule_spans(text: str) -> list[Span]:
    spans: list[Span] = []
    for m in _PEM.finditer(text):
        spans.append((m.start("secret"), m.end("secret"), "pem_private_key"))
    for kind, rx in _COMPILED:
        spans.extend((m.start("secret"), m.end("secret"), kind) for m in rx.finditer(text))
    for kind, rx in _COMPILED_CTX:
        for m in rx.finditer(text):
            value = m.group("secret")
            if kind == "basic_auth" and not _basic_ok(value):
                continue
            if kind == "bearer_token" and not re.search(r"\d", value):
                continue
            if looks_like_value(value):
                spans.append((m.start("secret"), m.end("secret"), kind))
    for m in _ASSIGN.finditer(text):
        group = "qv" if m.group("qv") is not None else "v"
        value = m.group(group)
        if (
            is_secret_name(m.group("name"))
            and looks_like_value(value)
            and not (_IDENT.fullmatch(value) and _names_itself(m.group("name"), value))
        ):
            spans.append((m.start(group), m.end(group), "secret_assignment"))
    for m in _USER_SLASH.finditer(text):
        if looks_like_value(m.group("secret")):
            spans.append((m.start("secret"), m.end("secret"), "user_slash_password"))
    for m in _PROSE.finditer(text):
        if looks_like_value(m.group("secret"), strict=True):
            spans.append((m.start("secret"), m.end("secret"), "prose_secret"))
    if "pgpass" in text:
        spans.extend((m.start("secret"), m.end("secret"), "pgpass") for m in _PGPASS.finditer(text))
    spans.extend(
        (m.start("secret"), m.end("secret"), "auth_base64")
        for m in _AUTH_B64.finditer(text)
        if _basic_ok(m.group("secret"))
    )
    spans.extend(
        (m.start("secret"), m.end("secret"), "hex_key") for m in _HEX_AFTER_KEYWORD.finditer(text)
    )
    if _AWS_CONTEXT.search(text):
        spans.extend(
            (m.start("secret"), m.end("secret"), "aws_secret_access_key")
            for m in _AWS_SECRET.finditer(text)
        )
    return spans


def apply(text: str, spans: Iterable[Span]) -> str:
    merged: list[list[int]] = []
    for start, end, _kind in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    for start, end in reversed(merged):
        text = text[:start] + MARK + text[end:]
    return text


# ----------------------------------------------------------------------------- library layer

_LIBRARY_EXCLUDE = {
    "Base64HighEntropyString",
    "HexHighEntropyString",
    "KeywordDetector",
    "IPPublicDetector",
}
_scan_line: Callable[[str], Iterable[Any]] | None = None


def _library() -> Callable[[str], Iterable[Any]]:
    global _scan_line
    if _scan_line is None:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import cache_bust, configure_settings_from_baseline

        names = [c.__name__ for c in get_mapping_from_secret_type_to_class().values()]
        cache_bust()
        configure_settings_from_baseline(
            {"plugins_used": [{"name": n} for n in names if n not in _LIBRARY_EXCLUDE]}
        )
        _scan_line = scan_line
    return _scan_line


def library_spans(text: str) -> list[Span]:
    scan = _library()
    spans: list[Span] = []
    offset = 0
    for line in text.splitlines(keepends=True):
        for secret in scan(line.rstrip("\r\n")):
            value = secret.secret_value or ""
            if "PRIVATE KEY" in value:  # the header only: the PEM rule takes the body
                continue
            start = line.find(value)
            while value and start != -1:
                spans.append((offset + start, offset + start + len(value), secret.type))
                start = line.find(value, start + len(value))
        offset += len(line)
    return spans


def redact(text: str) -> tuple[str, int]:
    spans = rule_spans(text) + library_spans(text)
    return apply(text, spans), len(spans)


def redact_rules_only(text: str) -> tuple[str, int]:
    spans = rule_spans(text)
    return apply(text, spans), len(spans)
