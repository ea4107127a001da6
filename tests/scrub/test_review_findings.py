"""What an attacker's review of the rules for held-out sets 9 and 10 found (each test failed
on the rules as reviewed, 705fe21): ordinary text the new rules took for a secret, and
secrets of the same classes they missed. The two slow shapes it found (a brace before a run of
word characters, a long line of short words after a context word) are in test_rules.py's
linear-growth shapes."""

from __future__ import annotations

from gitvault.scrub.engine import scrub_secrets, secret_spans


def _kinds(text: str) -> list[tuple[str, str]]:
    return [(text[s:e], k) for s, e, k in secret_spans(text)]


# --------------------------------------------------------------------------- slowness


# --------------------------------------------------------------------------- false positives


def test_numeric_code_year_after_master_code() -> None:
    # numeric_code: "master … code" reached 40 characters to any 4-digit number (a year)
    assert _kinds("merged into the master code base in 2019") == []


def test_numeric_code_port_after_building_code() -> None:
    # numeric_code: "building code" is developer prose; 8080 is a port
    assert _kinds("Building code on port 8080 takes a while") == []


def test_slashed_login_two_platforms() -> None:
    # slashed_login: any "word / name-with-digit" pair reads as user / passphrase
    assert _kinds("Supported on linux / macos-14") == []


def test_slashed_login_two_package_versions() -> None:
    # slashed_login: two package names
    assert _kinds("Move from react-dom / react-dom-18") == []


def test_said_password_key_type() -> None:
    # said_password: first passphrase-shaped token within 80 chars after "passphrase" (a key type)
    assert _kinds("passphrase prompts for ssh-ed25519 keys now") == []


def test_said_password_identifier_in_changelog() -> None:
    # said_password: a kebab-case name with a number after "password" in a changelog line
    assert _kinds("The password field uses input-type-3 now") == []


def test_token_flag_uuid_azure_tenant() -> None:
    # token_flag_uuid: -t is --tenant for az (a tenant id, not a token)
    assert _kinds("az account set -t 72f988bf-86f1-41af-91ab-2d7cd011db47") == []


def test_token_flag_uuid_tmux_target() -> None:
    # token_flag_uuid: -t is a target / tag for tmux, journalctl, docker exec
    assert _kinds("tmux attach -t 3f2a1b4c-9d8e-4f6a-b1c2-d3e4f5a6b7c8") == []


def test_pgpass_line_etc_passwd() -> None:
    # pgpass_line: an /etc/passwd line in a text that names port 5432 anywhere
    text = (
        'ports:\n  - "127.0.0.1:5432:5432"\n'
        "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin"
    )
    assert _kinds(text) == []


def test_pgpass_line_ipv6_address() -> None:
    # pgpass_line: an IPv6 address's last groups
    assert (
        _kinds("docker run -p 127.0.0.1:5432:5432 postgres\n2001:db8:85a3:0:0:8a2e:370:7334") == []
    )


def test_pgpass_line_linter_output() -> None:
    # pgpass_line: file:line:col:code:message
    assert _kinds("ip 127.0.0.1:5432:5432\nsrc.py:10:5:E501:line-too-long") == []


def test_irc_password_http_request_line() -> None:
    # irc_password: "/pass" as a URL path
    assert _kinds("GET /pass HTTP/1.1") == []


def test_sql_setting_value_translation_row() -> None:
    # sql_setting_value: a translation table row keyed 'password'
    assert _kinds("INSERT INTO i18n VALUES ('password', 'Passwort')") == []


def test_sql_setting_value_algorithm_name() -> None:
    # sql_setting_value: a setting that names an algorithm, under a token-ish name
    assert _kinds("UPDATE settings SET value = 'sha256' WHERE key = 'token_algorithm'") == []


def test_recovery_code_year_range_in_list() -> None:
    # recovery_code: any bullet "dddd-dddd" line anywhere in a text that mentions backup codes
    assert _kinds("Store backup codes safely.\nCopyright\n- 2019-2024\n") == []


def test_recovery_code_tool_names_in_list() -> None:
    # recovery_code: one-word bullets with a digit (sha256sum) in a text that mentions backup codes
    assert (
        _kinds("## Backup codes\nWe now support backup codes.\n\nDependencies:\n- sha256sum\n")
        == []
    )


def test_snmp_community_prose_word() -> None:
    # snmp_community: "community string" followed by an English word
    assert _kinds("community string should be changed from public") == []


def test_solana_keypair_jpeg_zigzag_table() -> None:
    # solana_keypair: any 64-number array in a text containing "key" (a JPEG zigzag table)
    order = [0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48]
    order += [41, 34, 27, 20, 13, 6, 7, 14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22]
    order += [
        15,
        23,
        30,
        37,
        44,
        51,
        58,
        59,
        52,
        45,
        38,
        31,
        39,
        46,
        53,
        60,
        61,
        54,
        47,
        55,
        62,
        63,
    ]
    zigzag = ",".join(map(str, order))
    assert _kinds(f"# sort key\nZIGZAG = [{zigzag}]") == []


# --------------------------------------------------------------------------- misses / leaks


def test_slashed_login_keeps_trailing_symbol_of_password() -> None:
    # slashed_login: rstrip(".:!?") cuts the password's own last character; "!" is left in clear
    out, _ = scrub_secrets("qa-admin / W4lnut_1!")
    assert "!" not in out


def test_slashed_login_tab_separated() -> None:
    # slashed_login: the regex allows tabs, the literal " / " does not
    assert _kinds("qa-admin\t/\tW4lnut_1") != []


def test_irc_identify_followed_by_another_line() -> None:
    # irc_password: "$" without (?m) was the window's end: IDENTIFY missed unless it ended the text
    assert _kinds("/msg NickServ IDENTIFY Xk9pLm2!\nthen join #chan") != []


def test_japanese_pin_word() -> None:
    # the new 暗証番号 (PIN) word: a PIN never passes the strict value test
    assert _kinds("暗証番号 4821") != []


def test_bitlocker_key_with_spaces() -> None:
    # bitlocker_recovery_key: groups separated by spaces (as typed from a printout)
    assert (
        _kinds("BitLocker recovery key:\n123456 234567 345678 456789 567890 678901 789012 890123")
        != []
    )


def test_totp_seed_sixteen_chars_in_four_groups() -> None:
    # totp_seed: the common 16-character seed is 4 groups; the rule wants 6 or more
    assert _kinds("2FA: JBSW Y3DP EHPK 3PXP") != []


def test_net_use_short_user_switch() -> None:
    # net_use_password: /u: is net use's short form of /user:
    assert _kinds("net use \\\\server\\ipc$ /u:corp\\alice S3cr3t!x") != []


def test_snmpwalk_community_flag() -> None:
    # snmp_community: the -c flag of snmpwalk/snmpget
    assert _kinds("snmpwalk -v2c -c Xk9pLm2 10.0.0.1") != []


# --------------------------------------------------------------------------- after 705fe21


def test_recovery_code_inline_file_name() -> None:
    # recovery_code (705fe21): any inline word-digits pair in a text that says "verification code"
    text = "Fix the email verification code flow.\nBuild: see config-win32.h and amd64-linux"
    assert _kinds(text) == []


def test_recovery_code_inline_two_ports() -> None:
    # recovery_code (705fe21): "\d{4} \d{4}" anywhere: two port numbers
    assert _kinds("Backup codes: listen on ports 8080 8443") == []
