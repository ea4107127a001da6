"""The secret filter (gitvault.scrub) against the bench/secrets corpora, and its properties.

The fast tests take a fixed stratified sample (two fakes of every kind, 300 benign entries);
tests/stress/test_secret_corpora.py runs the whole corpora (``just stress``) and prints every
miss and every false positive. Fake secrets here are assembled from pieces (see
tests/support/fake_secrets.py).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gitvault.scrub.engine import Scrubbed, reference_spans, scrub_secrets, secret_spans
from tests.support.secret_corpora import MARK, changed, load, recall, report, stratified

# --------------------------------------------------------------------------- the corpora


def test_sample_of_every_kind_is_redacted() -> None:
    rows = stratified(load("corpus.jsonl"), per_kind=2, seed=8)
    share, kinds, misses = recall(rows)
    assert kinds >= 40
    assert share >= 0.98, report("missed", misses)


def test_sample_of_real_history_is_kept() -> None:
    rows = random.Random(8).sample(load("benign.jsonl"), 300)
    fps = changed(rows)
    assert len(fps) <= 1, report("changed", fps)  # ≤ 0.5 %


FAKES = (
    "corpus.jsonl",
    "corpus_heldout.jsonl",
    "corpus_heldout2.jsonl",
    "corpus_heldout3.jsonl",
    "corpus_heldout4.jsonl",
    "corpus_heldout5.jsonl",
)
BENIGN = ("benign.jsonl", "benign_manpages.jsonl", "benign_paths.jsonl")


def test_sample_of_man_pages_and_paths_is_kept() -> None:
    # the line-level corpora: 4 of 25,000 man-page lines and 0 of 19,617 paths change in all
    # (tests/stress/test_secret_corpora.py holds the whole-corpus ceilings)
    for name in BENIGN[1:]:
        rows = random.Random(8).sample(load(name), 1000)
        fps = changed(rows)
        assert len(fps) <= 1, report("changed", fps)


def test_prefilters_change_no_result() -> None:
    # literals, windows and the other shortcuts only skip work: what every rule's pattern finds
    # over the whole text is the same (the whole corpora: tests/stress)
    rows = [row for name in FAKES for row in load(name)]
    rows += [row for name in BENIGN for row in random.Random(9).sample(load(name), 300)]
    rows += [
        row
        for n in (6, 7)
        for name in ("corpus", "benign")
        for row in load(f"{name}_heldout{n}.jsonl")
    ]
    differ = [row for row in rows if secret_spans(row["text"]) != reference_spans(row["text"])]
    assert not differ, report("prefiltered result differs", differ)


# Texts as channels build them: samples of every corpus run together after prose, in bullets,
# with words after a value and headings between (a save's sections, a note's body).
MIXED = [row["text"] for name in FAKES for row in load(name)]
MIXED += [row["text"] for name in BENIGN for row in random.Random(10).sample(load(name), 200)]
JOINERS = ["\n", "\n\n", " ", ": ", "\n- Keep it: ", " (m1)\n", "\n\n## Key Decisions\n- "]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(MIXED), st.sampled_from(JOINERS)), max_size=6))
def test_prefilters_change_no_result_on_texts_run_together(parts: list[tuple[str, str]]) -> None:
    text = "".join(sample + joiner for sample, joiner in parts)
    assert secret_spans(text) == reference_spans(text)


# --------------------------------------------------------------------------- behaviours new in
# this rule set (each was kept verbatim before)

GITLAB = "gl" + "pat-" + "xY7zK2mN9pQ4rS6tU8vW"
HF = "hf" + "_" + "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"
NPM = "np" + "m_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
SAS_SIG = (
    "sv=2022-11-02&ss=b&srt=co&sp=rl&se=2030-01-01T00:00:00Z&sig=" + "Zx9%2FAb3Cd4Ef5Gh6Ij7Kl8Mn"
)
AZ_KEY = "Ab3Cd4Ef5Gh6Ij7Kl8Mn9Op0Qr1St2Uv3Wx4Yz5Ab6Cd7Ef8Gh9Ij0Kl1Mn2Op3Qr4St5Uv6Wx7Yz8Ab9C=="


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"token {GITLAB}", "token [REDACTED:gitlab_token]"),
        (f"export HF_TOKEN={HF}", "export HF_TOKEN=[REDACTED:huggingface_token]"),
        (f"the npm token is {NPM} now", "the npm token is [REDACTED:npm_token] now"),
        (
            "Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=root;"
            f"SharedAccessKey={AZ_KEY}",
            "Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=root;"
            "SharedAccessKey=[REDACTED:azure_connection_key]",
        ),
        (
            f"https://acct.blob.core.windows.net/c?{SAS_SIG}",
            "https://acct.blob.core.windows.net/c?" + SAS_SIG.split("sig=")[0] + "sig="
            "[REDACTED:azure_sas_signature]",
        ),
        ("mysql -u root -pS3cr3t!pw db", "mysql -u root -p[REDACTED:mysql_password_flag] db"),
        (
            "curl -u deploy:Tr0ub4dor-x https://h/api",
            "curl -u deploy:[REDACTED:user_colon_password] https://h/api",
        ),
        (
            "https://bob:pa#ss9word@db.example.com/x",
            "https://bob:[REDACTED:url_password]@db.example.com/x",
        ),
        (
            "token_type=bearer&access_token=Zk8pQ2xW9mL4nR7t",
            "token_type=bearer&access_token=[REDACTED:query_token]",
        ),
        (
            "the admin password is CYXa-149vTBnWc until SSO",
            "the admin password is [REDACTED:prose_secret] until SSO",
        ),
        ("MYSQL_PWD=Kx9-v2Lm_q", "MYSQL_PWD=[REDACTED:secret_assignment]"),
        (
            "PASSPHRASE=summer coffee winter 49 duplicity /srv",
            "PASSPHRASE=[REDACTED:secret_assignment]",
        ),
        (
            "ALTER USER 'app'@'%' IDENTIFIED BY 'J-WZrQ5oNb';",
            "ALTER USER 'app'@'%' IDENTIFIED BY '[REDACTED:sql_password]';",
        ),
    ],
)
def test_newer_token_kinds_are_redacted(text: str, expected: str) -> None:
    assert scrub_secrets(text)[0] == expected


def test_unquoted_passphrase_keeps_the_next_lines() -> None:
    out, found = scrub_secrets("PASSPHRASE=two words\nnext line")
    assert out == "PASSPHRASE=[REDACTED:secret_assignment]\nnext line"
    assert found == [Scrubbed("secret_assignment", 1)]


def test_passphrase_variable_is_not_a_value() -> None:
    for text in ("PASSPHRASE=$PASS gpg --batch", "PASSPHRASE=${PASS} gpg"):
        assert scrub_secrets(text) == (text, [])


def test_overlapping_values_become_one_marker_of_the_earlier_rule() -> None:
    out, found = scrub_secrets(f"GITLAB_TOKEN={GITLAB}")
    assert out == "GITLAB_TOKEN=[REDACTED:gitlab_token]"
    assert found == [Scrubbed("gitlab_token", 1)]


def test_non_ascii_text_around_a_secret() -> None:
    # Lower-casing "İ" adds a character: positions are then taken from the text itself.
    out, _ = scrub_secrets(f"İstanbul — password: Kx9-v2Lm_q7Z and {GITLAB}")
    assert out == "İstanbul — password: [REDACTED:secret_assignment] and [REDACTED:gitlab_token]"


# --------------------------------------------------------------------------- properties

HEX = "0123456789abcdef"
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
SAFE_TEMPLATES = [
    "commit {v}",
    "Merge {v} into main",
    'Revert "fix: parser"\n\nThis reverts commit {v}.',
    "bump lodash to {v}",
    "Bump lodash from 4.17.20 to {v}",
    '"integrity": "{v}"',
    "resolved {v} (was pinned)",
    "id {v} in the request log",
    "see https://github.com/o/r/commit/{v}",
]


def hexes(n: int) -> st.SearchStrategy[str]:
    return st.text(HEX, min_size=n, max_size=n)


identifiers = st.one_of(
    hexes(40),  # commit SHAs, 40-hex strings
    hexes(7),
    hexes(64),
    st.uuids().map(str),
    st.tuples(*(st.integers(0, 99),) * 3).map(lambda v: "{}.{}.{}".format(*v)),
    st.tuples(st.integers(0, 30), st.integers(0, 99), st.text("abcrc0123456789", max_size=5)).map(
        lambda v: f"v{v[0]}.{v[1]}.0-{v[2]}" if v[2] else f"v{v[0]}.{v[1]}"
    ),
    st.text(B64, min_size=86, max_size=86).map(lambda b: f"sha512-{b}=="),
    st.text(B64, min_size=43, max_size=43).map(lambda b: f"sha256-{b}="),
)


@settings(max_examples=300, deadline=None)
@given(identifiers, st.sampled_from(SAFE_TEMPLATES))
# Integrity hashes whose base64 ends in a secret-looking part before the padding.
@example("sha256-" + "0" * 41 + "PW=", "resolved {v} (was pinned)")
@example("sha512-" + "A1" * 40 + "Token==", "{v} resolved")
def test_identifiers_around_secret_words_are_not_redacted(value: str, template: str) -> None:
    text = template.format(v=value)
    assert scrub_secrets(text) == (text, [])


PROVIDER_FAKES = [
    ("github_token", "gh" + "p_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"),
    ("gitlab_token", GITLAB),
    ("huggingface_token", HF),
    ("npm_token", NPM),
    ("aws_access_key_id", "AK" + "IA" + "Z3Q7XK2M4N5P6R7T"),
    ("slack_token", "xo" + "xb-" + "1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUv"),
    ("google_api_key", "AI" + "za" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),
]
# Words and separators without digits, '=' or ':', so no context rule fires on the filler.
filler = st.text(st.sampled_from("abcdefghij klmnop\nqrstuvwxyz,.!?()-"), max_size=80)


@settings(max_examples=300, deadline=None)
@given(filler, st.sampled_from(PROVIDER_FAKES), filler)
def test_text_outside_the_secret_is_unchanged(
    before: str, fake: tuple[str, str], after: str
) -> None:
    kind, secret = fake
    text = f"{before} {secret} {after}"
    out, found = scrub_secrets(text)
    assert out == f"{before} [REDACTED:{kind}] {after}"
    assert found == [Scrubbed(kind, 1)]


PIECES = [
    " ",
    "\n",
    "a",
    "word",
    "password",
    "token",
    "key",
    ": ",
    "=",
    '"',
    "'",
    "https://",
    "user:",
    "@host/",
    "Bearer ",
    "Authorization: ",
    "--password ",
    "PASSPHRASE=",
    "mysql -p",
    "?access_token=",
    "Kx9-v2Lm_q7Z",
    "s3cr3t!Pw",
    "[REDACTED:prose_secret]",
    GITLAB,
    HF,
    NPM,
    "AK" + "IA" + "Z3Q7XK2M4N5P6R7T",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "Q1w2E3r4T5",
    "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
    "-----BEGIN " + "RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    "İ",
]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=30).map("".join))
def test_redaction_is_idempotent_and_only_touches_its_spans(text: str) -> None:
    out, found = scrub_secrets(text)
    assert scrub_secrets(out) == (out, [])
    assert len(MARK.findall(out)) == len(MARK.findall(text)) + sum(r.count for r in found)
    # What is not a marker in the output is the input's text, in order: only values went.
    segments = MARK.split(out)
    at = 0
    for index, segment in enumerate(segments):
        found_at = text.find(segment, at)
        assert found_at != -1 and (index or found_at == 0), (segment, text)
        at = found_at + len(segment)
    assert text.endswith(segments[-1])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=30).map("".join))
def test_spans_are_what_one_pass_replaces(text: str) -> None:
    spans = secret_spans(text)
    assert all(
        a_end <= b_start for (_, a_end, _), (b_start, _, _) in zip(spans, spans[1:], strict=False)
    )
    for start, end, _kind in spans:
        assert 0 <= start < end <= len(text)
        assert not MARK.search(text[start:end])
