"""The secret filter (gitvault.scrub): every kind in the rule table is redacted and only its
value, what is not a secret is kept (placeholders, public keys, hashes), counts per kind, a
second pass changes nothing."""

from __future__ import annotations

import base64
import random
import re
import string

import pytest

from gitvault.scrub import rules as scrub_rules
from gitvault.scrub.engine import Scrubbed, scrub_secrets
from gitvault.scrub.rules import SECRET_PATTERNS
from tests.support.fake_secrets import (
    ANTHROPIC,
    AWS_KEY_ID,
    AWS_SECRET,
    AWS_SESSION_KEY_ID,
    GH_CLASSIC,
    GH_OAUTH,
    GH_PAT,
    GH_REFRESH,
    GH_SERVER,
    GH_USER,
    GOOGLE,
    JWT,
    OPENAI,
    OPENAI_PROJ,
    PEM_BODY,
    PEM_KEY,
    SLACK,
    SLACK_USER,
    STRIPE,
    STRIPE_RESTRICTED,
)

GIT_SHA = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # 40 hex: the empty tree

# A few kinds the tests below rely on by name (the full list is SECRET_PATTERNS).
KINDS = (
    "pem_private_key",
    "aws_access_key_id",
    "github_token",
    "anthropic_api_key",
    "openai_api_key",
    "slack_token",
    "google_api_key",
    "stripe_key",
    "jwt",
    "aws_secret_access_key",
    "url_password",
    "bearer_token",
    "basic_auth",
    "secret_assignment",
)


def marker(kind: str) -> str:
    return f"[REDACTED:{kind}]"


# --------------------------------------------------------------------------- secret patterns


def test_secret_patterns_are_the_documented_list() -> None:
    kinds = [kind for kind, _ in SECRET_PATTERNS]
    assert len(kinds) == len(set(kinds))
    assert set(KINDS) <= set(kinds)
    doc = scrub_rules.__doc__ or ""
    for kind in kinds:  # each kind has its own row in the docstring's tables
        assert re.search(rf"^``{kind}``\s", doc, re.MULTILINE), kind
    documented = re.findall(r"^``([a-z0-9_]+)``\s", doc, re.MULTILINE)
    assert sorted(documented) == sorted(kinds)  # and no row names a kind that does not exist
    assert all(isinstance(pattern, re.Pattern) for _, pattern in SECRET_PATTERNS)


POSITIVES: list[tuple[str, str, str]] = [
    # (kind, text, expected text)
    ("aws_access_key_id", f"key id {AWS_KEY_ID} here", "key id [REDACTED:aws_access_key_id] here"),
    ("aws_access_key_id", f"id={AWS_SESSION_KEY_ID}", "id=[REDACTED:aws_access_key_id]"),
    (
        "aws_secret_access_key",
        f"aws_secret_access_key = {AWS_SECRET}",
        "aws_secret_access_key = [REDACTED:aws_secret_access_key]",
    ),
    (
        "aws_secret_access_key",
        f'"SecretAccessKey": "{AWS_SECRET}"',
        '"SecretAccessKey": "[REDACTED:aws_secret_access_key]"',
    ),
    ("github_token", f"push with {GH_CLASSIC}.", "push with [REDACTED:github_token]."),
    ("github_token", GH_OAUTH, "[REDACTED:github_token]"),
    ("github_token", GH_USER, "[REDACTED:github_token]"),
    ("github_token", GH_SERVER, "[REDACTED:github_token]"),
    ("github_token", GH_REFRESH, "[REDACTED:github_token]"),
    ("github_token", f"({GH_PAT})", "([REDACTED:github_token])"),
    ("anthropic_api_key", f"key {ANTHROPIC}", "key [REDACTED:anthropic_api_key]"),
    ("openai_api_key", f"key {OPENAI}", "key [REDACTED:openai_api_key]"),
    ("openai_api_key", f"'{OPENAI_PROJ}'", "'[REDACTED:openai_api_key]'"),
    ("slack_token", f"bot {SLACK}", "bot [REDACTED:slack_token]"),
    ("slack_token", SLACK_USER, "[REDACTED:slack_token]"),
    ("google_api_key", f"maps {GOOGLE} ok", "maps [REDACTED:google_api_key] ok"),
    ("stripe_key", f"charge {STRIPE}", "charge [REDACTED:stripe_key]"),
    ("stripe_key", STRIPE_RESTRICTED, "[REDACTED:stripe_key]"),
    ("jwt", f"session {JWT} expired", "session [REDACTED:jwt] expired"),
    (
        "url_password",
        "postgres://bob:s3cr3t@db.internal:5432/app",
        "postgres://bob:[REDACTED:url_password]@db.internal:5432/app",
    ),
    ("url_password", "redis://:hunter2@cache:6379", "redis://:[REDACTED:url_password]@cache:6379"),
    (
        "bearer_token",
        "curl -H 'Authorization: Bearer abc123def456ghi'",
        "curl -H 'Authorization: Bearer [REDACTED:bearer_token]'",
    ),
    (
        "bearer_token",
        '{"authorization": "bearer abc123def456ghi"}',
        '{"authorization": "bearer [REDACTED:bearer_token]"}',
    ),
    (
        "basic_auth",
        "Authorization: Basic dXNlcjpodW50ZXIy",
        "Authorization: Basic [REDACTED:basic_auth]",
    ),
    ("secret_assignment", "DB_PASSWORD=hunter2", "DB_PASSWORD=[REDACTED:secret_assignment]"),
    (
        "secret_assignment",
        'export SERVICE_TOKEN="a1 b2 c3"',
        'export SERVICE_TOKEN="[REDACTED:secret_assignment]"',
    ),
    (
        "secret_assignment",
        "client_secret: 'k3y-w1th-d4sh'",
        "client_secret: '[REDACTED:secret_assignment]'",
    ),
    ("secret_assignment", "password: hunter2", "password: [REDACTED:secret_assignment]"),
    ("secret_assignment", "  passwd: hunter2", "  passwd: [REDACTED:secret_assignment]"),
    ("secret_assignment", "API_KEY = abc123", "API_KEY = [REDACTED:secret_assignment]"),
    ("secret_assignment", "apikey=abc123", "apikey=[REDACTED:secret_assignment]"),
    ("secret_assignment", "PRIVATE_KEY=abc123", "PRIVATE_KEY=[REDACTED:secret_assignment]"),
    ("secret_assignment", "ACCESS_KEY=abc123", "ACCESS_KEY=[REDACTED:secret_assignment]"),
    (
        "secret_assignment",
        '{"apiKey": "abc123", "user": "bob"}',
        '{"apiKey": "[REDACTED:secret_assignment]", "user": "bob"}',
    ),
    ("secret_assignment", "**Password:** hunter2", "**Password:** [REDACTED:secret_assignment]"),
    (
        "secret_assignment",
        "- **Password**: hunter2",
        "- **Password**: [REDACTED:secret_assignment]",
    ),
    ("long_flag", "run --password=hunter2", "run --password=[REDACTED:long_flag]"),
    ("secret_assignment", "GITHUBTOKEN=abc123", "GITHUBTOKEN=[REDACTED:secret_assignment]"),
    ("secret_assignment", "SECRETKEY=abc123", "SECRETKEY=[REDACTED:secret_assignment]"),
    ("secret_assignment", "authToken=abc123", "authToken=[REDACTED:secret_assignment]"),
    ("secret_assignment", "passwordHash=abc123", "passwordHash=[REDACTED:secret_assignment]"),
    # Not 40 characters: no aws_secret_access_key, but the name still makes it an assignment.
    (
        "secret_assignment",
        "aws_secret_access_key = short1234",
        "aws_secret_access_key = [REDACTED:secret_assignment]",
    ),
    ("secret_assignment", "DB_PASSWORD=Password1", "DB_PASSWORD=[REDACTED:secret_assignment]"),
]


@pytest.mark.parametrize(("kind", "text", "expected"), POSITIVES)
def test_each_secret_kind_is_redacted_once(kind: str, text: str, expected: str) -> None:
    assert scrub_secrets(text) == (expected, [Scrubbed(kind, 1)])


def test_pem_block_fully_removed() -> None:
    text = f"deploy key:\n{PEM_KEY}\nthen pushed"
    out, found = scrub_secrets(text)
    assert out == "deploy key:\n[REDACTED:pem_private_key]\nthen pushed"
    assert found == [Scrubbed("pem_private_key", 1)]
    for line in PEM_BODY:
        assert line not in out


@pytest.mark.parametrize("label", ["OPENSSH ", "EC ", "ENCRYPTED ", "", "DSA "])
def test_every_pem_private_key_label_is_redacted_whole(label: str) -> None:
    block = f"-----BEGIN {label}PRIVATE KEY-----\nAAAA\nBBBB\n-----END {label}PRIVATE KEY-----"
    assert scrub_secrets(f"x\n{block}\ny") == (
        "x\n[REDACTED:pem_private_key]\ny",
        [Scrubbed("pem_private_key", 1)],
    )


def test_pgp_private_key_block() -> None:
    block = "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----"
    assert scrub_secrets(block)[0] == "[REDACTED:pem_private_key]"


def test_two_pem_blocks_keep_text_between() -> None:
    out, found = scrub_secrets(f"{PEM_KEY}\nbetween\n{PEM_KEY}")
    assert out == "[REDACTED:pem_private_key]\nbetween\n[REDACTED:pem_private_key]"
    assert found == [Scrubbed("pem_private_key", 2)]


def test_public_key_and_certificate_next_to_a_private_key_are_kept() -> None:
    public = "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq\n-----END PUBLIC KEY-----"
    out, found = scrub_secrets(f"{public}\n{PEM_KEY}")
    assert out == f"{public}\n[REDACTED:pem_private_key]"
    assert found == [Scrubbed("pem_private_key", 1)]


def test_stripe_test_mode_keys_are_redacted_too() -> None:
    # Test-mode keys read and write the account's test data: a credential all the same.
    test_key = "sk" + "_test_" + "51H8xYz2Ab3Cd4Ef5Gh6Ij7Kl"
    assert scrub_secrets(f"{STRIPE} {test_key}") == (
        "[REDACTED:stripe_key] [REDACTED:stripe_key]",
        [Scrubbed("stripe_key", 2)],
    )


def test_pem_without_end_redacts_to_end() -> None:
    truncated = "\n".join(PEM_KEY.split("\n")[:3])
    out, found = scrub_secrets(f"head of key file:\n{truncated}\n...")
    assert out == "head of key file:\n[REDACTED:pem_private_key]"
    assert found == [Scrubbed("pem_private_key", 1)]
    # only to the end of its paragraph: what follows a blank line is another part of the text
    # (a save's next section), and the key's lines are all gone
    text = f"## Summary\npasted:\n{truncated}\n(rest cut off)\n\n## Next Steps\n- rotate it"
    out, found = scrub_secrets(text)
    assert out == "## Summary\npasted:\n[REDACTED:pem_private_key]\n\n## Next Steps\n- rotate it"


def test_url_password_keeps_scheme_user_host_and_path() -> None:
    out, _ = scrub_secrets("clone https://alice:pa%40ss@git.example.com/org/repo.git now")
    assert out == "clone https://alice:[REDACTED:url_password]@git.example.com/org/repo.git now"


def test_url_password_with_raw_at_sign_is_redacted_whole() -> None:
    out, _ = scrub_secrets("amqp://bob:p@ss@mq.example.com/vhost")
    assert out == "amqp://bob:[REDACTED:url_password]@mq.example.com/vhost"


NEGATIVES = [
    "We refactored the resolver and fixed the flaky test; next, benchmark the fold.",
    f"commit {GIT_SHA}",
    f"sha: {GIT_SHA}",
    f"Merged {GIT_SHA} into main ({GIT_SHA[:7]}).",
    "The tokenizer splits words; the tokenizer: handles unicode.",
    "tokenizer: bpe",
    "TOKENIZER=bpe",
    "MAX_TOKENS=4096",
    "max_token: 100",
    "token_budget: 9500",
    "SECRET_NAME=prod-db",
    "PASSWORD_FILE=/run/secrets/db",
    "TOKEN_URL=https://auth.example.com/token",
    "passwords: rotated monthly",
    "the database password: was rotated yesterday",
    "if token == expected: return",
    "The secret to speed is caching; keyboards are fine.",
    "AK" + "IA" + "SHORT123",
    "gh" + "p_short",
    "scikit uses sk-learn; see sk-this-is-not-a-real-key-at-all",
    "disk-" + "a" * 30,
    "AK" + "IA" + "Z3Q7XK2M4N5P6R7TXYZ",  # 23 characters: not a key id
    "OAuth bearer authentication is configured",
    "branch task-20240101-release-notes-v2 merged",
    "eyJ only one segment eyJhbGciOiJIUzI1NiJ9",
    "https://example.com:8080/path?q=1",
    "git@github.com:org/repo.git",
    "ssh://git@github.com/org/repo.git",
    "Authorization: Bearer $TOKEN",
    "Authorization: Bearer <token>",
    'headers = {"Authorization": f"Bearer {token}"}',
    "Authorization: Bearer short",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq\n-----END PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+g\n-----END CERTIFICATE-----",
    "xoxb is a Slack prefix; AIza is a Google one",
    "sk_test_123 is the placeholder key in Stripe's docs",
    f"aws_secret_access_key is documented near {GIT_SHA}",
]


@pytest.mark.parametrize("text", NEGATIVES)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert scrub_secrets(text) == (text, [])


PLACEHOLDERS = [
    "API_KEY=",
    'API_KEY=""',
    "API_KEY=''",
    "API_KEY=<your-api-key>",
    "API_KEY=<your api key>",
    "API_KEY=${API_KEY}",
    'export GITHUB_TOKEN="${GITHUB_TOKEN}"',
    "API_KEY=$API_KEY",
    "TOKEN=$(cat ~/.token)",
    "TOKEN={{ vault_token }}",
    "TOKEN=%TOKEN%",
    "SECRET=xxx",
    "SECRET=XXXXXXXX",
    "SECRET=****",
    "SECRET=...",
    "SECRET=changeme",
    "SECRET=CHANGE_ME",
    "SECRET=placeholder",
    "SECRET=your_secret_here",
    "SECRET=none",
    "token: str",
    "    password: Optional[str] = None",
    "password = getpass.getpass()",
    'api_key = os.environ["API_KEY"]',
    "SECRET_KEY = settings.SECRET_KEY",
    "self.token = token",
    "postgres://bob:${DB_PASSWORD}@db/app",
    "postgres://bob:<password>@db/app",
    'dsn = f"postgres://{user}:{password}@{host}/app"',
    'dsn = "postgres://%s:%s@%s/app" % (user, pw, host)',
    "PASSWORD=%(password)s",
    "postgres://bob:@db/app",
    f"aws_secret_access_key = {'x' * 40}",
    "Authorization: Bearer your_token_here",
    # A placeholder word or one plain word is not a value (measured: fewer false positives).
    "DB_PASSWORD=password",
    "password: required",
    "token: string",
]


@pytest.mark.parametrize("text", PLACEHOLDERS)
def test_placeholders_are_kept(text: str) -> None:
    assert scrub_secrets(text) == (text, [])


def test_already_redacted_value_is_not_counted_again() -> None:
    text = "DB_PASSWORD=[REDACTED:secret_assignment]"
    assert scrub_secrets(text) == (text, [])


def test_specific_kind_wins_over_assignment() -> None:
    out, found = scrub_secrets(f"GITHUB_TOKEN={GH_CLASSIC}\nOPENAI_API_KEY='{OPENAI}'")
    assert out == "GITHUB_TOKEN=[REDACTED:github_token]\nOPENAI_API_KEY='[REDACTED:openai_api_key]'"
    assert found == [Scrubbed("github_token", 1), Scrubbed("openai_api_key", 1)]


def test_specific_kind_wins_over_url_password_and_bearer() -> None:
    text = f"https://x-access:{GH_CLASSIC}@github.com/o/r\nAuthorization: Bearer {JWT}"
    out, found = scrub_secrets(text)
    assert out == (
        "https://x-access:[REDACTED:github_token]@github.com/o/r\n"
        "Authorization: Bearer [REDACTED:jwt]"
    )
    assert found == [Scrubbed("github_token", 1), Scrubbed("jwt", 1)]


def test_redaction_counts_per_kind_in_pattern_order() -> None:
    text = "\n".join(
        [
            f"token one {GH_CLASSIC}",
            f"token two {GH_OAUTH}",
            f"jwt {JWT}",
            "DB_PASSWORD=s3cret-1",
            'API_KEY="s3cret-2"',
            "client_secret: s3cret-3",
            f"aws {AWS_KEY_ID}",
        ]
    )
    out, found = scrub_secrets(text)
    assert found == [
        Scrubbed("aws_access_key_id", 1),
        Scrubbed("github_token", 2),
        Scrubbed("jwt", 1),
        Scrubbed("secret_assignment", 3),
    ]
    assert out.count("[REDACTED:") == 7
    for secret in (GH_CLASSIC, GH_OAUTH, JWT, "s3cret-", AWS_KEY_ID):
        assert secret not in out


def test_no_secrets_gives_no_redactions() -> None:
    assert scrub_secrets("") == ("", [])


def test_redaction_is_frozen() -> None:
    redaction = Scrubbed("jwt", 1)
    with pytest.raises(AttributeError):
        redaction.count = 2


@pytest.mark.parametrize(("kind", "text", "expected"), POSITIVES)
def test_redaction_is_stable_on_second_pass(kind: str, text: str, expected: str) -> None:
    out, _ = scrub_secrets(text)
    assert scrub_secrets(out) == (out, [])


def test_large_text_with_long_runs_stays_fast() -> None:
    # Pathological shapes for naive regexes: long runs of name characters and separators.
    # Each line carries the literals that make every pattern actually run on it; a quadratic
    # scan over any of these 40k-character runs takes several seconds.
    text = "\n".join(
        [
            "a" * 40_000 + " token://x",
            "--a" * 15_000 + " token=",
            "token " * 20_000 + "=",
            "x=" * 20_000 + " secret",
            "sk-" + "-" * 40_000 + "1",
        ]
    )
    # No timing assertion (speed is measured by bench/, never by unit tests): a quadratic
    # pattern shows up as this test hanging. What it asserts is that none of these shapes is
    # mistaken for a secret: only the last line (shaped like an sk- key) is redacted.
    cleaned, found = scrub_secrets(text)
    assert found == [Scrubbed("openai_api_key", 1)]
    assert cleaned.splitlines()[:4] == text.splitlines()[:4]
    assert cleaned.splitlines()[4] == "[REDACTED:openai_api_key]"


# Runs that make a rule look around each match (a token's ends, the rest of a line): a scan
# that is not bounded costs each match the run's length, and the run's length squared in all.
_RUNS = {
    "symbols": lambda n: "#" * n,
    "mixed symbols": lambda n: "!a1B" * (n // 4),
    "at signs": lambda n: "@" * n,
    "a path's folders": lambda n: "ab/" * (n // 3) + "Xk9#mQ2!pLw3",
    "words for password": lambda n: "contrasenya " * (n // 12),
    "assignments": lambda n: "KEY=v@1 " * (n // 8),
    "seed words": lambda n: "wallet " + "legal winner " * (n // 13) + "1",
    "base32 groups": lambda n: "2fa " + "ab2c " * (n // 5) + "-",
    "digit groups": lambda n: "recovery " + "123456-" * (n // 7),
    "numbers and commas": lambda n: "key [" + "12," * (n // 3),
    "colon fields": lambda n: "db:5432:" + "a:" * (n // 2),
    "net use": lambda n: "net use " * (n // 8),
    "login pairs": lambda n: "a / " * (n // 4),
    "short words after a context word": lambda n: "wallet seed: " + "abc " * (n // 4),
    "a brace before a run of word characters": lambda n: "{" + "a" * n,
}


@pytest.mark.parametrize("shape", sorted(_RUNS))
def test_the_filter_grows_linearly_with_a_run_of_what_its_rules_look_around(shape: str) -> None:
    # Not a speed target (bench/ has those): how the CPU time grows when the same shape is
    # four times longer, in one process. Linear is 4x; a scan bounded by nothing is ~16x.
    import time

    make = _RUNS[shape]
    scrub_secrets(make(2_000))  # the rules' patterns compiled, the automaton built

    def cost(n: int) -> float:
        text = make(n)
        best = float("inf")
        for _ in range(3):
            start = time.process_time()
            scrub_secrets(text)
            best = min(best, time.process_time() - start)
        return max(best, 1e-4)

    small, large = cost(10_000), cost(40_000)
    assert large / small < 9, (shape, small, large)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("DB_PASS=qwertyuiop", "DB_PASS=[REDACTED:secret_assignment]"),
        ('export PGPASSWORD="hunters"', 'export PGPASSWORD="[REDACTED:secret_assignment]"'),
        ("TWILIO_AUTH_TOKEN=swordfish", "TWILIO_AUTH_TOKEN=[REDACTED:secret_assignment]"),
        # Not an assignment of the secret itself: a description, a placeholder, a variable.
        ("password: required", "password: required"),
        ("PASSWORD = secret", "PASSWORD = secret"),
        ("DB_PASS=changeme", "DB_PASS=changeme"),
        ("token=$TOKEN", "token=$TOKEN"),
    ],
)
def test_a_secret_names_value_set_with_equals_is_redacted_whatever_it_looks_like(
    text: str, expected: str
) -> None:
    assert scrub_secrets(text)[0] == expected


# --------------------------------------------------------------------------- generic classes

_R = random.Random(1717)
_B62 = string.ascii_letters + string.digits


def _rand(n: int, alphabet: str = _B62) -> str:
    while True:
        value = "".join(_R.choice(alphabet) for _ in range(n))
        mixed = any(c.islower() for c in value) or alphabet != _B62
        if sum(c.isdigit() for c in value) >= 3 and any(c.isupper() for c in value) and mixed:
            return value


# Made-up providers' keys: no rule names their prefix; their shape is what gives them away.
UNKNOWN_PROVIDER_KEYS = [
    "zq" + "x-" + _rand(48),
    "acme" + "_live_" + _rand(32),
    "tok" + "-us-" + _rand(40),
    "K0" + "0" + _rand(28),
    "QX" + "7" + _rand(24, string.ascii_uppercase + string.digits),
]


@pytest.mark.parametrize("key", UNKNOWN_PROVIDER_KEYS)
def test_a_random_looking_key_of_an_unknown_provider_is_redacted(key: str) -> None:
    for text in (f"use {key} for the staging box", f"leak/{key}.txt", f"backup/token-{key}.json"):
        cleaned, _ = scrub_secrets(text)
        assert key not in cleaned, text


NOT_RANDOM = [
    GIT_SHA,
    f"crash-{GIT_SHA}.testcase",
    "sha256=7NsdCiXWAhNkmoW1pvF7rbZExyLAQIWtDtSHXIsH6YU,103",  # a wheel RECORD line
    '"integrity": "sha512-Fk3reQDVPZUMbEm7Zwxz03BWQMW3V5buSk9aU8OckTrO8A1nQtbqvYsAantGNer'
    'mwsIsXcuOBqcoJ3HuMELctw=="',
    "request 3f0c2a9e-8d1b-4c6e-9a7f-1b2c3d4e5f60 failed",  # a UUID is an id
    "usr/share/man/man3/XftTextRender16LE.3.gz",
    "test_parse_HTTPResponseHeaders_with_unicode_names",
    "bcrypt hash $2b$12$zQ4CooEXdGqcwi0PHsgc8eXbTqP1Gd0mN2yZ7s3uH5aVwJkLrI9Oe kept",
    "node_modules/.pnpm/@babel+core@7.23.9/node_modules/@babel/core/lib/index.js",
]


@pytest.mark.parametrize("text", NOT_RANDOM)
def test_hashes_ids_and_names_are_not_random_tokens(text: str) -> None:
    assert scrub_secrets(text) == (text, [])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("./migrate --db-password=qwertyuiop", "./migrate --db-password=[REDACTED:secret_flag]"),
        (
            "keytool -srcstorepass Saffron1631@ -x",
            "keytool -srcstorepass [REDACTED:secret_flag] -x",
        ),
        ("ldapmodify --bindPassword Hx7!kq2Lm", "ldapmodify --bindPassword [REDACTED:secret_flag]"),
        (
            "cqlsh db -u cassandra -p Basalt9931#",
            "cqlsh db -u cassandra -p [REDACTED:short_flag_secret]",
        ),
        # a flag's documentation, another flag, a path: kept
        ("docker login --password-stdin ghcr.io", "docker login --password-stdin ghcr.io"),
        ("--private-key=LOCAL_FILE_PATH", "--private-key=LOCAL_FILE_PATH"),
        ("--private-key=/home/me/key.pfx", "--private-key=/home/me/key.pfx"),
        ("--token TOKEN", "--token TOKEN"),
        ("ssh -p 2222 host", "ssh -p 2222 host"),
    ],
)
def test_a_secret_named_flag_is_redacted(text: str, expected: str) -> None:
    assert scrub_secrets(text)[0] == expected


def test_a_login_commands_credential_is_redacted() -> None:
    key = "".join(_R.choice("0123456789abcdef") for _ in range(40))
    assert scrub_secrets(f"wandb login {key}")[0] == "wandb login [REDACTED:auth_command_token]"
    assert scrub_secrets("git log --author login")[0] == "git log --author login"


def test_base64_that_decodes_to_a_secret_is_redacted() -> None:
    token = "gh" + "p_" + _rand(36)
    once = base64.b64encode(token.encode()).decode()
    twice = base64.b64encode(once.encode()).decode()
    env = base64.b64encode(b"REDIS_PASSWORD=Juniper4471!\n").decode()
    pem = base64.b64encode(PEM_KEY.encode()).decode()
    for text in (
        f"TOKEN_B64={once}",
        f"blob: {twice}",
        f"echo {env} | base64 -d",
        f"tls.key: {pem}",
    ):
        cleaned, found = scrub_secrets(text)
        assert "[REDACTED:" in cleaned and all(v not in cleaned for v in (once, twice, env, pem))
        assert found
    # base64 of ordinary text or of binary (a hash) is kept
    plain = base64.b64encode(b"hello world, this is fine").decode()
    digest = base64.b64encode(bytes(range(32))).decode()
    for text in (f"data: {plain}", f"sum: {digest}"):
        assert scrub_secrets(text) == (text, [])


def test_a_value_split_over_lines_or_concatenated_is_redacted_whole() -> None:
    token = "gh" + "p_" + _rand(36)
    head, tail = token[:18], token[18:]
    for text in (
        f'const t = "{head}" + "{tail}";',
        f'KEY = (\n    "{head}"\n    "{tail}"\n)',
        f"TOKEN={head}\\\n{tail}",
        f"> the key:\n> {head}\n> {tail}",
        f"$ cat api.key\n{head}\n{tail}\n$",
    ):
        cleaned, found = scrub_secrets(text)
        assert head not in cleaned and tail not in cleaned, text
        assert found == [Scrubbed("github_token", 1)]
        assert scrub_secrets(cleaned) == (cleaned, [])
    # ordinary lines and string pieces stay as they are
    for text in ('msg = "Hello, " + "world"', "a line that is long enough\nanother line here"):
        assert scrub_secrets(text) == (text, [])
