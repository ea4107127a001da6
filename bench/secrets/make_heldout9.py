# ruff: noqa: E501
"""Held-out set 9 for the secret-redaction filter, written blind.

Written without reading gitvault/scrub/, tests/scrub/, any other
make_heldout*.py, or any corpus*/benign* file, except the first three lines
of corpus_heldout8.jsonl and benign_heldout8.jsonl (for the JSONL format) and
the `kind` values of corpus_heldout8.jsonl (so that every kind here is new).
The filter was never run on this output while it was being written.

Every value below is fake: random strings from one seeded random.Random,
shaped like the vendor's format (prefix, length, alphabet, and the checksum
where the vendor has a published one: GitHub/npm CRC32-base62, Grafana
CRC32-hex, Matrix syt_ CRC32, base58check for WIF/xprv, bech32 for age keys,
CRC-24 for OpenPGP armor, HMAC-SHA256 for JWTs).  None of them opens anything.

Writes:
  corpus_heldout9.jsonl  {"kind", "text", "secret", "shape"}  shape: provider | context
  benign_heldout9.jsonl  {"source": "heldout9:<class>", "text"}
Standard library only; deterministic.
"""

import base64
import hashlib
import hmac
import json
import os
import random
import string
import struct
import sys
import zlib
from collections import Counter

R = random.Random(0x5EC9E7)

UP = string.ascii_uppercase
LOW = string.ascii_lowercase
DIG = string.digits
ALNUM = DIG + UP + LOW
HEX = "0123456789abcdef"
B64 = UP + LOW + DIG + "+/"
B64U = UP + LOW + DIG + "-_"
B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
B32 = UP + "234567"


def rs(n, a=ALNUM):
    return "".join(R.choice(a) for _ in range(n))


def rhex(n):
    return rs(n, HEX)


def rHEX(n):
    return rs(n, HEX.upper())


def rdig(n):
    return R.choice("123456789") + rs(n - 1, DIG)


def rbytes(n):
    return bytes(R.randrange(256) for _ in range(n))


def b64(b):
    return base64.b64encode(b).decode()


def b64u(b):
    return base64.urlsafe_b64encode(b).decode().rstrip("=")


def uuid4():
    h = rhex(32)
    h = h[:12] + "4" + h[13:16] + R.choice("89ab") + h[17:]
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def base62(num, width):
    out = ""
    while num:
        num, r = divmod(num, 62)
        out = ALNUM[r] + out
    return out.rjust(width, "0")


def gh_style(prefix, n=30):
    """GitHub / npm token: 30 random base62 + 6-char base62 CRC32 of them."""
    body = rs(n)
    return f"{prefix}_{body}{base62(zlib.crc32(body.encode()), 6)}"


def grafana_sa():
    body = "glsa_" + rs(32) + "_"
    return body + format(zlib.crc32(body.encode()), "08x")


def matrix_syt(localpart):
    head = "syt_" + b64(localpart.encode()).rstrip("=") + "_" + rs(20)
    return head + "_" + base62(zlib.crc32(head.encode()), 6)


def b58enc(b):
    n = int.from_bytes(b, "big")
    out = ""
    while n:
        n, r = divmod(n, 58)
        out = B58[r] + out
    pad = len(b) - len(b.lstrip(b"\0"))
    return "1" * pad + out


def b58check(payload):
    chk = hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4]
    return b58enc(payload + chk)


def wif():
    return b58check(b"\x80" + rbytes(32) + b"\x01")


def xprv():
    return b58check(
        bytes.fromhex("0488ade4") + b"\x00" + b"\0" * 8 + rbytes(32) + b"\x00" + rbytes(32)
    )


_BECH = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def _polymod(values):
    gen = [0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3]
    chk = 1
    for v in values:
        b = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ v
        for i in range(5):
            chk ^= gen[i] if ((b >> i) & 1) else 0
    return chk


def bech32(hrp, data8):
    acc, bits, data = 0, 0, []
    for x in data8:
        acc = (acc << 8) | x
        bits += 8
        while bits >= 5:
            bits -= 5
            data.append((acc >> bits) & 31)
    if bits:
        data.append((acc << (5 - bits)) & 31)
    hv = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]
    pm = _polymod(hv + data + [0] * 6) ^ 1
    chk = [(pm >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(_BECH[d] for d in data + chk)


def crc24(data):
    crc = 0xB704CE
    for byte in data:
        crc ^= byte << 16
        for _ in range(8):
            crc <<= 1
            if crc & 0x1000000:
                crc ^= 0x1864CFB
    return crc & 0xFFFFFF


def pgp_armor(kind, body):
    enc = b64(body)
    lines = [enc[i : i + 64] for i in range(0, len(enc), 64)]
    c = b64(crc24(body).to_bytes(3, "big"))
    return (
        f"-----BEGIN PGP {kind}-----\n\n" + "\n".join(lines) + f"\n={c}\n-----END PGP {kind}-----"
    )


def pem(label, body, width=64):
    enc = b64(body)
    return (
        f"-----BEGIN {label}-----\n"
        + "\n".join(enc[i : i + width] for i in range(0, len(enc), width))
        + f"\n-----END {label}-----"
    )


def sshstr(b):
    if isinstance(b, str):
        b = b.encode()
    return struct.pack(">I", len(b)) + b


def openssh_ed25519(comment):
    pub = rbytes(32)
    pubblob = sshstr("ssh-ed25519") + sshstr(pub)
    ci = rbytes(4)
    priv = (
        ci + ci + sshstr("ssh-ed25519") + sshstr(pub) + sshstr(rbytes(32) + pub) + sshstr(comment)
    )
    i = 1
    while len(priv) % 8:
        priv += bytes([i])
        i += 1
    blob = (
        b"openssh-key-v1\0"
        + sshstr("none")
        + sshstr("none")
        + sshstr(b"")
        + struct.pack(">I", 1)
        + sshstr(pubblob)
        + sshstr(priv)
    )
    enc = b64(blob)
    return (
        "-----BEGIN OPENSSH PRIVATE KEY-----\n"
        + "\n".join(enc[i : i + 70] for i in range(0, len(enc), 70))
        + "\n-----END OPENSSH PRIVATE KEY-----"
    )


def ssh_pub_ed25519():
    return "ssh-ed25519 " + b64(sshstr("ssh-ed25519") + sshstr(rbytes(32)))


def jwt(payload, key=None, alg="HS256"):
    h = b64u(json.dumps({"alg": alg, "typ": "JWT"}, separators=(",", ":")).encode())
    p = b64u(json.dumps(payload, separators=(",", ":")).encode())
    if alg == "HS256":
        sig = hmac.new(key or rbytes(32), f"{h}.{p}".encode(), hashlib.sha256).digest()
    else:
        sig = rbytes(256)
    return f"{h}.{p}.{b64u(sig)}"


def aws_akid(prefix="AKIA"):
    return prefix + rs(16, "234567" + UP)


def aws_secret():
    return rs(40, UP + LOW + DIG + "+/")


def pw(n=None):
    """A human-chosen password in one of several common styles (URL-safe symbols only)."""
    words = [
        "Falcon",
        "river",
        "Mango",
        "tundra",
        "Orbit",
        "cobalt",
        "Lisbon",
        "pepper",
        "Quartz",
        "willow",
        "Nimbus",
        "saffron",
        "Tango",
        "granite",
        "Velvet",
        "harbor",
        "Zephyr",
        "maple",
        "Juniper",
        "ember",
        "Kestrel",
        "lagoon",
        "Ostrich",
        "fjord",
        "Paprika",
        "meadow",
        "Sierra",
        "walnut",
        "Topaz",
        "glacier",
    ]
    seasons = [
        "Winter",
        "Sommer",
        "Herbst",
        "Primavera",
        "Autumn",
        "Invierno",
        "Zima",
        "Lente",
        "Kesä",
        "Summer",
    ]
    style = R.random()
    if style < 0.35:
        s = (
            R.choice(words)
            + R.choice("!*-_.~+")
            + R.choice(words).lower()
            + rdig(R.choice([2, 3, 4]))
        )
        if R.random() < 0.3:
            s += R.choice("!*~")
    elif style < 0.55:
        s = pw_rand(R.randint(10, 22))
    elif style < 0.7:
        s = (
            R.choice(seasons)
            + str(R.randint(2019, 2026))
            + R.choice(["!", "!!", "*", "-" + rdig(2), "_" + rdig(2)])
        )
    elif style < 0.85:
        w = R.choice(words).lower()
        w = w.translate(str.maketrans({"a": "4", "e": "3", "o": "0", "i": "1", "s": "5"}))
        s = w[0].upper() + w[1:] + R.choice(["!", "*", "_", "~"]) + rdig(R.choice([1, 2, 4]))
    else:
        s = "-".join(R.choice(words).lower() for _ in range(R.choice([3, 4]))) + "-" + rdig(1)
    return s


def pw_rand(n=20, sym="!-_.~"):
    s = rs(n - 3) + R.choice(sym) + R.choice(DIG) + R.choice(UP)
    lst = list(s)
    R.shuffle(lst)
    return "".join(lst)


CORPUS = []
BENIGN = []
CTX = {}
SEEN = set()


def _add(kind, shape, ctx, secret, text):
    if "\\u00a7" in text:  # placeholder went through json.dumps: the secret appears JSON-escaped
        secret = json.dumps(secret)[1:-1]
        text = text.replace("\\u00a7", secret)
    text = text.replace("\u00a7", secret)
    assert secret and secret in text, kind
    assert kind not in SEEN, kind
    SEEN.add(kind)
    CTX[kind] = ctx
    CORPUS.append({"kind": kind, "text": text, "secret": secret, "shape": shape})


def P(kind, ctx, secret, text):
    _add(kind, "provider", ctx, secret, text)


def C(kind, ctx, secret, text):
    _add(kind, "context", ctx, secret, text)


def B(cls, ctx, text):
    BENIGN.append({"source": f"heldout9:{cls}", "text": text, "_ctx": ctx})


# ---------------------------------------------------------------- provider
def provider():
    # --- source forges / CI
    s = gh_style("ghp")
    P(
        "github_classic_pat_git_credential_store_line",
        "config",
        s,
        f"$ cat ~/.git-credentials\nhttps://lmoreau:§@github.com\nhttps://gitlab-ci-token:{rs(20)}@gitlab.internal.example",
    )
    s = "github_pat_11" + rs(20, UP + DIG) + "_" + rs(59)
    P(
        "github_fine_grained_pat_renovate_config_js",
        "code",
        s,
        "module.exports = {\n  platform: 'github',\n  token: '§',\n  repositories: ['acme/billing', 'acme/ledger'],\n  onboarding: false,\n};",
    )
    s = gh_style("ghs")
    P(
        "github_actions_token_leaked_in_debug_log",
        "log",
        s,
        "##[debug]Evaluating: secrets.GITHUB_TOKEN\n##[debug]=> '§'\n##[debug]Result: '§'\n##[debug]Finishing: Run actions/checkout@v4",
    )
    s = gh_style("gho")
    P(
        "github_oauth_token_gh_hosts_yml",
        "yaml",
        s,
        "github.com:\n    users:\n        dvorakova:\n            oauth_token: §\n    git_protocol: ssh\n    user: dvorakova\n    oauth_token: §",
    )
    s = gh_style("ghr", 70)
    P(
        "github_refresh_token_device_flow_response",
        "json",
        s,
        json.dumps(
            {
                "access_token": "ghu_" + rs(36),
                "expires_in": 28800,
                "refresh_token": "§",
                "refresh_token_expires_in": 15724800,
                "scope": "",
                "token_type": "bearer",
            },
            indent=2,
        ),
    )
    s = "glpat-" + rs(20, ALNUM + "-_")
    P(
        "gitlab_pat_python_gitlab_cfg",
        "ini",
        s,
        "[global]\ndefault = work\nssl_verify = true\ntimeout = 5\n\n[work]\nurl = https://gitlab.example.org\nprivate_token = §\napi_version = 4",
    )
    s = "glrt-" + rs(20, ALNUM + "-_")
    P(
        "gitlab_runner_auth_token_config_toml",
        "toml",
        s,
        'concurrent = 4\ncheck_interval = 0\n\n[[runners]]\n  name = "build-07"\n  url = "https://gitlab.example.org"\n  id = 4121\n  token = "§"\n  token_obtained_at = 2026-10-02T08:11:40Z\n  executor = "docker"\n  [runners.docker]\n    image = "alpine:3.20"',
    )
    s = "glptt-" + rhex(40)
    P(
        "gitlab_pipeline_trigger_token_curl_form",
        "cli",
        s,
        'curl -X POST --fail -F token=§ -F ref=main -F "variables[DEPLOY_ENV]=staging" https://gitlab.example.org/api/v4/projects/381/trigger/pipeline',
    )
    s = "ATBB" + rs(28) + rHEX(8)
    P(
        "bitbucket_app_password_netrc",
        "config",
        s,
        "machine api.bitbucket.org\n  login ci-bot-acme\n  password §\nmachine bitbucket.org\n  login ci-bot-acme\n  password §",
    )
    s = "CCIPAT_" + rs(22) + "_" + rhex(40)
    P(
        "circleci_personal_token_cli_setup_yml",
        "yaml",
        s,
        'host: https://circleci.com\nendpoint: graphql-unstable\ntoken: §\nrestendpoint: api/v2\ntls_cert: ""',
    )
    s = "bkua_" + rhex(40)
    P(
        "buildkite_api_token_bk_cli_configure",
        "shell_history",
        s,
        "  512  brew install buildkite/buildkite/bk\n  513  bk configure --org acme-eng --token §\n  514  bk build list --pipeline deploy-api --state failed",
    )
    s = "squ_" + rhex(40)
    P(
        "sonarqube_user_token_sonar_scanner_properties",
        "config",
        s,
        "sonar.projectKey=acme_ledger\nsonar.sources=src\nsonar.host.url=https://sonar.acme.dev\nsonar.token=§\nsonar.python.coverage.reportPaths=coverage.xml",
    )
    s = "pul-" + rhex(40)
    P(
        "pulumi_access_token_gh_workflow_env",
        "yaml",
        s,
        "    steps:\n      - uses: pulumi/actions@v6\n        with:\n          command: up\n          stack-name: acme/infra/prod\n        env:\n          PULUMI_ACCESS_TOKEN: §\n          AWS_REGION: eu-west-1",
    )
    s = rs(14) + ".atlasv1." + rs(67)
    P(
        "terraform_cloud_token_credentials_tfrc_json",
        "json",
        s,
        json.dumps({"credentials": {"app.terraform.io": {"token": "§"}}}, indent=2),
    )
    s = "nfp_" + rs(36)
    P(
        "netlify_pat_deploy_script",
        "code",
        s,
        f"#!/usr/bin/env bash\nset -euo pipefail\nnpm run build\nNETLIFY_AUTH_TOKEN=§ npx netlify deploy --prod --dir=dist --site {uuid4()}",
    )
    s = "rnd_" + rs(32)
    P(
        "render_api_key_python_requests",
        "code",
        s,
        'import requests\n\nRENDER_KEY = "§"\nr = requests.get("https://api.render.com/v1/services?limit=20", headers={"Authorization": f"Bearer {RENDER_KEY}"})\nr.raise_for_status()',
    )
    s = "dop_v1_" + rhex(64)
    P(
        "digitalocean_pat_doctl_config_yaml",
        "yaml",
        s,
        "access-token: §\ncontext: default\noutput: text\nkubernetes:\n  version: 1.31.1-do.3",
    )
    s = "sbp_" + rhex(40)
    P(
        "supabase_management_token_mcp_args",
        "json",
        s,
        json.dumps(
            {
                "mcpServers": {
                    "supabase": {
                        "command": "npx",
                        "args": [
                            "-y",
                            "@supabase/mcp-server-supabase@latest",
                            "--read-only",
                            "--project-ref=" + rs(20, LOW),
                            "--access-token",
                            "§",
                        ],
                    }
                }
            },
            indent=2,
        ),
    )
    s = "HRKU-AA" + rs(58, ALNUM + "_-")
    P(
        "heroku_api_key_new_format_netrc_login",
        "shell_history",
        s,
        "heroku auth:token\n › Warning: token will expire 11/28/2027\n§",
    )
    s = "pscale_tkn_" + rs(43, ALNUM + "_")
    P(
        "planetscale_service_token_gh_action",
        "yaml",
        s,
        f"      - name: Create deploy request\n        run: pscale deploy-request create ledger add-index-orders --org acme\n        env:\n          PLANETSCALE_SERVICE_TOKEN_ID: {rs(12, LOW + DIG)}\n          PLANETSCALE_SERVICE_TOKEN: §",
    )
    s = "dapi" + rhex(32)
    P(
        "databricks_pat_databrickscfg",
        "ini",
        s,
        f"[DEFAULT]\nhost  = https://adb-{rdig(16)}.11.azuredatabricks.net\ntoken = §\n\n[staging]\nhost  = https://adb-{rdig(16)}.7.azuredatabricks.net\nauth_type = databricks-cli",
    )
    s = "AVNS_" + rs(19, ALNUM + "_-")
    P(
        "aiven_service_password_psql_uri",
        "url",
        s,
        "psql 'postgres://avnadmin:§@pg-ledger-acme.a.aivencloud.com:21781/defaultdb?sslmode=require'",
    )
    s = "npg_" + rs(12)
    P(
        "neon_role_password_drizzle_config",
        "code",
        s,
        "import { defineConfig } from 'drizzle-kit';\n\nexport default defineConfig({\n  schema: './src/db/schema.ts',\n  dialect: 'postgresql',\n  dbCredentials: {\n    url: 'postgresql://neondb_owner:§@ep-shy-sound-a2k3f1qz-pooler.eu-central-1.aws.neon.tech/neondb?sslmode=require',\n  },\n});",
    )
    s = "dckr_pat_" + rs(27, ALNUM + "-_")
    P(
        "dockerhub_pat_docker_login_password_stdin",
        "shell_history",
        s,
        "echo § | docker login -u acmebuild --password-stdin\ndocker push acmebuild/api:2.14.0",
    )
    s = gh_style("npm")
    P(
        "npm_granular_token_yarnrc_yml",
        "yaml",
        s,
        'nodeLinker: node-modules\nnpmScopes:\n  acme:\n    npmRegistryServer: "https://registry.npmjs.org"\n    npmAuthToken: "§"\n    npmAlwaysAuth: true',
    )
    mac = (
        b"\x02\x01\x08pypi.org\x02$"
        + uuid4().encode()
        + b'\x00\x02*[1,["ledger"]]'
        + b"\x00\x06 "
        + rbytes(32)
    )
    s = "pypi-" + b64u(mac)
    P(
        "pypi_api_token_pdm_config_toml",
        "toml",
        s,
        '[repository.pypi]\nusername = "__token__"\npassword = "§"\n\n[pypi]\nverify_ssl = true',
    )
    s = "rubygems_" + rhex(48)
    P("rubygems_api_key_gem_credentials", "yaml", s, "---\n:rubygems_api_key: §\n")
    s = "cio" + rs(32)
    P(
        "crates_io_token_cargo_credentials_toml",
        "toml",
        s,
        '[registry]\ntoken = "§"\n\n[registries.acme]\ncredential-provider = "cargo:token-from-stdout op read op://dev/acme-registry/token"',
    )
    s = "oy2" + rs(43, LOW + DIG)
    P(
        "nuget_api_key_dotnet_push",
        "cli",
        s,
        "dotnet nuget push bin/Release/Acme.Ledger.3.2.0.nupkg --api-key § --source https://api.nuget.org/v3/index.json --skip-duplicate",
    )
    s = "cmVmdGtuOjAxOjE3" + rs(48, ALNUM)
    P(
        "jfrog_reference_token_pip_conf_index_url",
        "ini",
        s,
        "[global]\nindex-url = https://svc-ci:§@acme.jfrog.io/artifactory/api/pypi/pypi-virtual/simple\ntimeout = 60",
    )
    # --- cloud
    a, s = aws_akid(), aws_secret()
    C(
        "aws_secret_key_boto3_client_kwargs",
        "code",
        s,
        f's3 = boto3.client(\n    "s3",\n    region_name="ap-southeast-2",\n    aws_access_key_id="{a}",\n    aws_secret_access_key="§",\n)',
    )
    a, s = aws_akid(), aws_secret()
    C(
        "aws_secret_key_credentials_process_json_stdout",
        "json",
        s,
        json.dumps(
            {
                "Version": 1,
                "AccessKeyId": a,
                "SecretAccessKey": "§",
                "Expiration": "2026-12-03T07:11:00Z",
            }
        ),
    )
    s = aws_akid("ASIA")
    tok = "IQoJb3JpZ2luX2VjE" + rs(300, B64)
    P(
        "aws_session_token_env_export_block",
        "env",
        tok,
        f"export AWS_ACCESS_KEY_ID={s}\nexport AWS_SECRET_ACCESS_KEY={aws_secret()}\nexport AWS_SESSION_TOKEN=§",
    )
    s = aws_secret()
    C(
        "aws_secret_key_env_sort_grep_ci_log",
        "log",
        s,
        f"$ env | sort | grep -i aws\nAWS_ACCESS_KEY_ID={aws_akid()}\nAWS_DEFAULT_REGION=eu-central-1\nAWS_SECRET_ACCESS_KEY=§",
    )
    s = "AIza" + rs(35, ALNUM + "-_")
    P(
        "google_api_key_gemini_cli_settings_env",
        "env",
        s,
        f"# ~/.gemini/.env\nGEMINI_API_KEY=§\nGOOGLE_CLOUD_PROJECT=acme-ml-{rdig(6)}",
    )
    s = "GOCSPX-" + rs(28, ALNUM + "-_")
    P(
        "google_oauth_client_secret_client_secret_json",
        "json",
        s,
        json.dumps(
            {
                "installed": {
                    "client_id": f"{rdig(12)}-{rs(32, LOW + DIG)}.apps.googleusercontent.com",
                    "project_id": "acme-sheets-sync",
                    "auth_uri": "https://accounts.google.com/o/oauth2/auth",
                    "token_uri": "https://oauth2.googleapis.com/token",
                    "client_secret": "§",
                    "redirect_uris": ["http://localhost"],
                }
            }
        ),
    )
    s = "1//0" + rs(99, ALNUM + "-_")
    P(
        "google_refresh_token_rclone_drive_conf",
        "ini",
        s,
        '[gdrive]\ntype = drive\nscope = drive\ntoken = {"access_token":"ya29.'
        + rs(120, ALNUM + "-_")
        + '","token_type":"Bearer","refresh_token":"§","expiry":"2026-12-01T10:44:12.31+01:00"}\nteam_drive =',
    )
    s = "ya29.a0" + rs(170, ALNUM + "-_")
    P(
        "google_access_token_gcloud_print_access_token",
        "shell_history",
        s,
        '$ gcloud auth print-access-token\n§\n$ curl -s -H "Authorization: Bearer $(gcloud auth print-access-token)" https://storage.googleapis.com/storage/v1/b?project=acme-prod',
    )
    s = rs(3, ALNUM) + "8Q~" + rs(34, ALNUM + "~._-")
    P(
        "azure_ad_client_secret_appsettings_json",
        "json",
        s,
        json.dumps(
            {
                "AzureAd": {
                    "Instance": "https://login.microsoftonline.com/",
                    "TenantId": uuid4(),
                    "ClientId": uuid4(),
                    "ClientSecret": "§",
                    "CallbackPath": "/signin-oidc",
                }
            },
            indent=2,
        ),
    )
    s = rs(30)
    C(
        "alibaba_access_key_secret_ossutil_config",
        "ini",
        s,
        f"[Credentials]\nlanguage=EN\nendpoint=oss-cn-hangzhou.aliyuncs.com\naccessKeyID=LTAI5t{rs(18)}\naccessKeySecret=§",
    )
    s = rs(32)
    C(
        "tencent_secret_key_tccli_credential",
        "json",
        s,
        json.dumps({"secretId": "AKID" + rs(32), "secretKey": "§", "token": ""}, indent=4),
    )
    s = uuid4()
    C(
        "scaleway_secret_key_uuid_cli_config",
        "yaml",
        s,
        f"access_key: SCW{rs(17, UP + DIG)}\nsecret_key: §\ndefault_organization_id: {uuid4()}\ndefault_region: fr-par\ndefault_zone: fr-par-1",
    )
    s = "y0_AgAAAA" + rs(50, ALNUM + "-_")
    P(
        "yandex_oauth_token_yc_config",
        "yaml",
        s,
        f"current: default\nprofiles:\n  default:\n    token: §\n    cloud-id: b1g{rs(17, LOW + DIG)}\n    folder-id: b1g{rs(17, LOW + DIG)}",
    )
    s = "dt0c01." + rs(24, UP + DIG) + "." + rs(64, UP + DIG)
    P(
        "dynatrace_api_token_oneagent_install",
        "cli",
        s,
        f'wget -O Dynatrace-OneAgent.sh "https://{rs(8, LOW)}.live.dynatrace.com/api/v1/deployment/installer/agent/unix/default/latest?arch=x86" --header="Authorization: Api-Token §"',
    )
    # --- payments
    s = "sk_live_51" + rs(22) + rs(74)
    P(
        "stripe_live_secret_key_php_dotenv_quoted",
        "env",
        s,
        f'APP_ENV=production\nSTRIPE_KEY=pk_live_51{rs(96)}\nSTRIPE_SECRET="§"\nCASHIER_CURRENCY=eur',
    )
    s = "rk_live_51" + rs(96)
    P(
        "stripe_restricted_key_stripe_cli_config",
        "toml",
        s,
        f'[default]\ndevice_name = "mbp-akira"\nlive_mode_api_key = "§"\nlive_mode_key_expires_at = "2027-03-01"\ntest_mode_api_key = "rk_test_51{rs(96)}"',
    )
    s = "whsec_" + rs(32)
    P(
        "stripe_webhook_signing_secret_listen_output",
        "log",
        s,
        "$ stripe listen --forward-to localhost:4242/webhooks\n> Ready! You are using Stripe API Version [2025-09-30]. Your webhook signing secret is § (^C to quit)",
    )
    s = "EAAA" + rs(60, ALNUM + "-_")
    P(
        "square_access_token_python_client",
        "code",
        s,
        'from square import Square\nfrom square.environment import SquareEnvironment\n\nclient = Square(\n    environment=SquareEnvironment.PRODUCTION,\n    token="§",\n)',
    )
    s = f"access_token$production${rs(16, LOW + DIG)}${rhex(32)}"
    P(
        "braintree_access_token_ruby_gateway",
        "code",
        s,
        'gateway = Braintree::Gateway.new(\n  access_token: "§",\n)\nresult = gateway.transaction.sale(amount: "10.00", payment_method_nonce: nonce)',
    )
    s = "FLWSECK-" + rhex(32) + "-X"
    P(
        "flutterwave_secret_key_node_env",
        "env",
        s,
        f"FLW_PUBLIC_KEY=FLWPUBK-{rhex(32)}-X\nFLW_SECRET_KEY=§\nFLW_ENCRYPTION_KEY={rhex(12)}",
    )
    s = "xnd_production_" + rs(50)
    P(
        "xendit_secret_key_basic_auth_curl",
        "cli",
        s,
        'curl https://api.xendit.co/v2/invoices -X POST -u §: -H \'Content-Type: application/json\' -d \'{"external_id":"inv-2291","amount":150000}\'',
    )
    s = "sk_sbox_" + rs(26, LOW + DIG)
    P(
        "checkout_com_sandbox_secret_key_java",
        "code",
        s,
        'CheckoutApi api = CheckoutSdk.builder()\n    .staticKeys()\n    .secretKey("§")\n    .environment(Environment.SANDBOX)\n    .build();',
    )
    s = "live_" + rs(40, ALNUM + "-_")
    P(
        "gocardless_live_access_token_python",
        "code",
        s,
        'import gocardless_pro\nclient = gocardless_pro.Client(access_token="§", environment="live")',
    )
    # --- AI APIs
    s = "sk-proj-" + rs(74, ALNUM + "-_") + "T3BlbkFJ" + rs(74, ALNUM + "-_")
    P(
        "openai_project_key_langchain_notebook_cell",
        "code",
        s,
        'import os\nos.environ["OPENAI_API_KEY"] = "§"\nfrom langchain_openai import ChatOpenAI\nllm = ChatOpenAI(model="gpt-4.1-mini", temperature=0)',
    )
    s = "sk-svcacct-" + rs(74, ALNUM + "-_") + "T3BlbkFJ" + rs(74, ALNUM + "-_")
    P(
        "openai_service_account_key_k8s_secret_stringdata",
        "k8s",
        s,
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: openai\n  namespace: rag\ntype: Opaque\nstringData:\n  OPENAI_API_KEY: §",
    )
    s = "sk-admin-" + rs(74, ALNUM + "-_") + "T3BlbkFJ" + rs(74, ALNUM + "-_")
    P(
        "openai_admin_key_usage_curl",
        "cli",
        s,
        'curl "https://api.openai.com/v1/organization/usage/completions?start_time=1764547200&limit=7" -H "Authorization: Bearer §"',
    )
    s = "sk-ant-api03-" + rs(93, ALNUM + "-_") + "AA"
    P(
        "anthropic_key_claude_desktop_mcp_env",
        "json",
        s,
        json.dumps(
            {
                "mcpServers": {
                    "review": {
                        "command": "uvx",
                        "args": ["acme-review-mcp"],
                        "env": {"ANTHROPIC_API_KEY": "§", "REVIEW_REPO": "acme/ledger"},
                    }
                }
            },
            indent=2,
        ),
    )
    s = "sk-ant-admin01-" + rs(93, ALNUM + "-_") + "AA"
    P(
        "anthropic_admin_key_python_header",
        "code",
        s,
        'resp = httpx.get(\n    "https://api.anthropic.com/v1/organizations/workspaces",\n    headers={"x-api-key": "§", "anthropic-version": "2023-06-01"},\n)',
    )
    s = "gsk_" + rs(52)
    P(
        "groq_key_openai_compatible_base_url",
        "code",
        s,
        'client = OpenAI(\n    base_url="https://api.groq.com/openai/v1",\n    api_key="§",\n)',
    )
    s = "r8_" + rs(37)
    P(
        "replicate_token_cog_push_session",
        "shell_history",
        s,
        'export REPLICATE_API_TOKEN=§\ncog login --token-stdin <<< "$REPLICATE_API_TOKEN"\ncog push r8.im/acme/sdxl-ft',
    )
    s = "hf_" + rs(34, UP + LOW)
    P(
        "huggingface_token_huggingface_cli_login_transcript",
        "log",
        s,
        "$ huggingface-cli login --token § --add-to-git-credential\nToken is valid (permission: write).\nYour token has been saved in your configured git credential helpers (store).\nLogin successful",
    )
    s = "pplx-" + rs(48)
    P(
        "perplexity_key_raycast_ai_extension_json",
        "json",
        s,
        json.dumps({"name": "perplexity", "preferences": {"apiKey": "§", "model": "sonar-pro"}}),
    )
    s = "xai-" + rs(80)
    P(
        "xai_key_typescript_sdk",
        "code",
        s,
        "import { createXai } from '@ai-sdk/xai';\n\nconst xai = createXai({ apiKey: '§' });",
    )
    s = "sk-or-v1-" + rhex(64)
    P(
        "openrouter_key_aichat_config_yaml",
        "yaml",
        s,
        "model: openrouter:anthropic/claude-sonnet-4.5\nclients:\n  - type: openai-compatible\n    name: openrouter\n    api_base: https://openrouter.ai/api/v1\n    api_key: §",
    )
    s = "lsv2_pt_" + rhex(32) + "_" + rhex(10)
    P(
        "langsmith_key_dotenv_tracing",
        "env",
        s,
        "LANGSMITH_TRACING=true\nLANGSMITH_ENDPOINT=https://eu.api.smith.langchain.com\nLANGSMITH_API_KEY=§\nLANGSMITH_PROJECT=support-bot-eval",
    )
    s = "pcsk_" + rs(5) + "_" + rs(64)
    P(
        "pinecone_key_python_init",
        "code",
        s,
        'from pinecone import Pinecone\npc = Pinecone(api_key="§")\nindex = pc.Index("docs-v3")',
    )
    s = "sk_" + rhex(48)
    P(
        "elevenlabs_key_xi_api_key_header",
        "cli",
        s,
        f'curl -X POST "https://api.elevenlabs.io/v1/text-to-speech/{rs(20)}" -H "xi-api-key: §" -H "Content-Type: application/json" -d @line.json -o out.mp3',
    )
    s = "tvly-" + rs(32)
    P(
        "tavily_key_agent_tools_env",
        "env",
        s,
        "# search tools\nTAVILY_API_KEY=§\nSEARCH_MAX_RESULTS=8",
    )
    s = "nvapi-" + rs(64, ALNUM + "-_")
    P(
        "nvidia_nim_key_docker_run",
        "cli",
        s,
        "docker run -it --rm --gpus all --shm-size=16GB -e NGC_API_KEY=§ -v ~/.cache/nim:/opt/nim/.cache -p 8000:8000 nvcr.io/nim/meta/llama-3.1-8b-instruct:latest",
    )
    s = "sk-lf-" + uuid4()
    P(
        "langfuse_secret_key_compose_env",
        "compose",
        s,
        f"  worker:\n    image: acme/agent-worker:1.8\n    environment:\n      LANGFUSE_HOST: https://cloud.langfuse.com\n      LANGFUSE_PUBLIC_KEY: pk-lf-{uuid4()}\n      LANGFUSE_SECRET_KEY: §",
    )
    s = "fw_" + rs(24)
    P(
        "fireworks_key_litellm_completion",
        "code",
        s,
        'response = litellm.completion(\n    model="fireworks_ai/accounts/fireworks/models/qwen3-235b-a22b",\n    messages=msgs,\n    api_key="§",\n)',
    )
    s = "jina_" + rhex(32) + rs(28)
    P(
        "jina_reader_key_curl_header",
        "cli",
        s,
        "curl 'https://r.jina.ai/https://example.com/changelog' -H 'Authorization: Bearer §' -H 'X-Return-Format: markdown'",
    )
    # --- messaging
    s = "xoxb-" + rdig(12) + "-" + rdig(13) + "-" + rs(24)
    P(
        "slack_bot_token_bolt_python_app",
        "code",
        s,
        'from slack_bolt import App\napp = App(\n    token="§",\n    signing_secret=os.environ["SLACK_SIGNING_SECRET"],\n)',
    )
    s = "xoxp-" + rdig(12) + "-" + rdig(12) + "-" + rdig(13) + "-" + rhex(32)
    P(
        "slack_user_token_slackdump_cmd",
        "shell_history",
        s,
        "./slackdump -export acme_export.zip -t § -cookie d=xoxd-redacted",
    )
    s = "xapp-1-A" + rs(10, UP + DIG) + "-" + rdig(13) + "-" + rhex(64)
    P(
        "slack_app_level_token_socket_mode_env",
        "env",
        s,
        "SLACK_BOT_TOKEN=${SLACK_BOT_TOKEN}\nSLACK_APP_TOKEN=§\nSOCKET_MODE=1",
    )
    s = (
        "https://hooks.slack.com/services/T"
        + rs(10, UP + DIG)
        + "/B"
        + rs(10, UP + DIG)
        + "/"
        + rs(24)
    )
    P(
        "slack_incoming_webhook_alertmanager_config",
        "yaml",
        s,
        "receivers:\n  - name: oncall-slack\n    slack_configs:\n      - api_url: '§'\n        channel: '#alerts-prod'\n        send_resolved: true",
    )
    s = f"{rdig(10)}:AA{rs(33, ALNUM + '-_')}"
    P(
        "telegram_bot_token_python_telegram_bot",
        "code",
        s,
        'application = ApplicationBuilder().token("§").build()\napplication.add_handler(CommandHandler("start", start))\napplication.run_polling()',
    )
    uid = rdig(18)
    s = b64(uid.encode()).rstrip("=") + "." + rs(6, ALNUM + "-_") + "." + rs(38, ALNUM + "-_")
    P(
        "discord_bot_token_discord_js_login",
        "code",
        s,
        "const client = new Client({ intents: [GatewayIntentBits.Guilds] });\nclient.once('ready', () => console.log(`logged in as ${client.user.tag}`));\nclient.login('§');",
    )
    s = f"https://discord.com/api/webhooks/{rdig(19)}/{rs(68, ALNUM + '-_')}"
    P(
        "discord_webhook_url_github_action_notify",
        "yaml",
        s,
        "      - name: Notify\n        if: failure()\n        run: |\n          curl -H 'Content-Type: application/json' -d '{\"content\":\"deploy failed on ${{ github.ref_name }}\"}' \\\n            §",
    )
    s = rs(32)
    C(
        "twilio_api_key_secret_node_positional",
        "code",
        s,
        f"const client = require('twilio')('SK{rhex(32)}', '§', {{ accountSid: 'AC{rhex(32)}' }});",
    )
    s = "SG." + rs(22, ALNUM + "-_") + "." + rs(43, ALNUM + "-_")
    P("sendgrid_key_postfix_sasl_relay", "config", s, "[smtp.sendgrid.net]:587 apikey:§")
    s = "key-" + rhex(32)
    P(
        "mailgun_legacy_key_curl_user_api",
        "cli",
        s,
        "curl -s --user 'api:§' https://api.eu.mailgun.net/v3/mg.acme.dev/messages -F from='Ops <ops@mg.acme.dev>' -F to=oncall@acme.dev -F subject='disk 91%' -F text='see grafana'",
    )
    s = rhex(32) + "-us21"
    P(
        "mailchimp_key_dc_suffix_wp_option_sql",
        "sql",
        s,
        "INSERT INTO `wp_options` (`option_name`, `option_value`, `autoload`) VALUES ('mc4wp', 'a:2:{s:7:\"api_key\";s:37:\"§\";s:10:\"debug_log\";i:0;}', 'yes');",
    )
    s = "xkeysib-" + rhex(64) + "-" + rs(16)
    P("brevo_key_symfony_mailer_dsn", "env", s, "MAILER_DSN=brevo+api://§@default")
    s = "re_" + rs(8) + "_" + rs(24)
    P(
        "resend_key_nextjs_route",
        "code",
        s,
        "import { Resend } from 'resend';\nconst resend = new Resend('§');\n\nexport async function POST() {\n  await resend.emails.send({ from: 'hi@acme.dev', to: 'x@y.z', subject: 'hello', html: '<p>hi</p>' });\n}",
    )
    s = matrix_syt("alertbot")
    P(
        "matrix_synapse_access_token_maubot_config",
        "yaml",
        s,
        "homeserver:\n  address: https://matrix.acme.chat\n  domain: acme.chat\nuser:\n  id: '@alertbot:acme.chat'\n  access_token: §\n  device_id: MAUBOTQX",
    )
    s = (
        "https://acme.webhook.office.com/webhookb2/"
        + uuid4()
        + "@"
        + uuid4()
        + "/IncomingWebhook/"
        + rhex(32)
        + "/"
        + uuid4()
        + "/V2"
        + rs(43, ALNUM + "-_")
    )
    P(
        "teams_incoming_webhook_powershell",
        "code",
        s,
        "$uri = '§'\n$body = @{ text = \"Backup on $env:COMPUTERNAME finished with code $LASTEXITCODE\" } | ConvertTo-Json\nInvoke-RestMethod -Method Post -Uri $uri -Body $body -ContentType 'application/json'",
    )
    # --- observability
    s = grafana_sa()
    P(
        "grafana_service_account_token_terraform_provider",
        "hcl",
        s,
        'provider "grafana" {\n  url  = "https://grafana.acme.dev"\n  auth = "§"\n}',
    )
    gjson = json.dumps(
        {
            "o": rdig(6),
            "n": "stack-" + rdig(6) + "-alloy-write",
            "k": rs(24),
            "m": {"r": "prod-eu-west-2"},
        },
        separators=(",", ":"),
    )
    s = "glc_" + b64(gjson.encode())
    P(
        "grafana_cloud_access_policy_token_alloy",
        "config",
        s,
        f'prometheus.remote_write "cloud" {{\n  endpoint {{\n    url = "https://prometheus-prod-24-prod-eu-west-2.grafana.net/api/prom/push"\n    basic_auth {{\n      username = "{rdig(7)}"\n      password = "§"\n    }}\n  }}\n}}',
    )
    s = "NRAK-" + rs(27, UP + DIG)
    P(
        "newrelic_user_key_nerdgraph_curl",
        "cli",
        s,
        "curl https://api.newrelic.com/graphql -H 'Content-Type: application/json' -H 'API-Key: §' --data-binary '{\"query\":\"{ actor { user { name } } }\"}'",
    )
    s = "sntryu_" + rhex(64)
    P(
        "sentry_user_auth_token_sentryclirc",
        "ini",
        s,
        "[defaults]\nurl = https://sentry.io/\norg = acme\nproject = web\n\n[auth]\ntoken = §",
    )
    sj = json.dumps(
        {
            "iat": 1764000000.5,
            "url": "https://sentry.io",
            "region_url": "https://de.sentry.io",
            "org": "acme",
        },
        separators=(",", ":"),
    )
    s = "sntrys_" + b64(sj.encode()).rstrip("=") + "_" + rs(43, ALNUM + "/+")
    P(
        "sentry_org_token_vite_plugin_config",
        "code",
        s,
        "sentryVitePlugin({\n  org: 'acme',\n  project: 'dashboard',\n  authToken: '§',\n  sourcemaps: { filesToDeleteAfterUpload: ['./dist/**/*.map'] },\n}),",
    )
    s = "phx_" + rs(43)
    P(
        "posthog_personal_api_key_hogql_script",
        "code",
        s,
        'POSTHOG_PERSONAL_KEY = "§"\nresp = requests.post(f"https://eu.posthog.com/api/projects/{PROJECT}/query/", json={"query": {"kind": "HogQLQuery", "query": q}}, headers={"Authorization": f"Bearer {POSTHOG_PERSONAL_KEY}"})',
    )
    # --- productivity / SaaS
    s = "lin_api_" + rs(40)
    P(
        "linear_api_key_graphql_client_ts",
        "code",
        s,
        "const linear = new LinearClient({ apiKey: '§' });\nconst me = await linear.viewer;",
    )
    s = "ntn_" + rdig(11) + rs(35)
    P(
        "notion_integration_secret_n8n_export",
        "json",
        s,
        json.dumps({"name": "Notion account", "type": "notionApi", "data": {"apiKey": "§"}}),
    )
    s = "pat" + rs(14) + "." + rhex(64)
    P(
        "airtable_pat_pyairtable",
        "code",
        s,
        "from pyairtable import Api\napi = Api('§')\ntable = api.table('app"
        + rs(14)
        + "', 'Inventory')",
    )
    s = "figd_" + rs(40, ALNUM + "-_")
    P(
        "figma_pat_design_tokens_script",
        "shell_history",
        s,
        "FIGMA_TOKEN=§ node scripts/export-tokens.mjs --file " + rs(22),
    )
    s = "PMAK-" + rhex(24) + "-" + rhex(34)
    P(
        "postman_api_key_newman_run",
        "cli",
        s,
        f"newman run https://api.getpostman.com/collections/{rdig(8)}-{uuid4()}?apikey=§ -e staging.postman_environment.json --reporters cli,junit",
    )
    s = "ATATT3xFfGF0" + rs(170, ALNUM + "-_") + "=" + rHEX(8)
    P(
        "atlassian_api_token_jira_cli_env",
        "env",
        s,
        "JIRA_SERVER=https://acme.atlassian.net\nJIRA_LOGIN=r.okafor@acme.dev\nJIRA_API_TOKEN=§",
    )
    s = "dp.st.prd." + rs(40)
    P(
        "doppler_service_token_docker_entrypoint",
        "dockerfile",
        s,
        'FROM node:22-slim\nRUN (curl -Ls --tlsv1.2 --proto "=https" --retry 3 https://cli.doppler.com/install.sh || wget -t 3 -qO- https://cli.doppler.com/install.sh) | sh\nENV DOPPLER_TOKEN=§\nCMD ["doppler", "run", "--", "node", "server.js"]',
    )
    s = "hvs.CAESI" + rs(86, ALNUM + "-_")
    P(
        "vault_service_token_vault_agent_log",
        "log",
        s,
        "2026-11-30T09:14:02.118Z [INFO]  agent.auth.handler: authentication successful, sending token to sinks\n2026-11-30T09:14:02.119Z [DEBUG] agent.sink.file: token written: path=/home/vault/.vault-token token=§",
    )
    s = (
        "sk."
        + b64u(
            json.dumps(
                {"u": "acme-maps", "a": "cl" + rs(23, LOW + DIG)}, separators=(",", ":")
            ).encode()
        )
        + "."
        + rs(22, ALNUM + "-_")
    )
    P(
        "mapbox_secret_token_gradle_properties",
        "config",
        s,
        "org.gradle.jvmargs=-Xmx4g\nMAPBOX_DOWNLOADS_TOKEN=§",
    )
    s = "shpat_" + rhex(32)
    P(
        "shopify_admin_token_shopify_app_env",
        "env",
        s,
        "SHOPIFY_STORE_DOMAIN=acme-outdoor.myshopify.com\nSHOPIFY_ADMIN_ACCESS_TOKEN=§\nSHOPIFY_API_VERSION=2025-10",
    )
    s = "shpss_" + rhex(32)
    P(
        "shopify_shared_secret_hmac_verify_ruby",
        "code",
        s,
        "SHOPIFY_SECRET = '§'.freeze\n\ndef verified?(data, hmac_header)\n  digest = OpenSSL::HMAC.digest('sha256', SHOPIFY_SECRET, data)\n  ActiveSupport::SecurityUtils.secure_compare(Base64.strict_encode64(digest), hmac_header)\nend",
    )
    s = "00" + rs(40, ALNUM + "-_")
    P(
        "okta_ssws_token_terraform_tfvars",
        "hcl",
        s,
        'okta_org_name  = "acme"\nokta_base_url  = "okta.com"\nokta_api_token = "§"',
    )
    s = "EAAG" + rs(180)
    P(
        "facebook_page_access_token_graph_explorer_url",
        "url",
        s,
        f"https://graph.facebook.com/v21.0/{rdig(15)}/feed?fields=message,created_time&access_token=§",
    )
    # --- crypto wallets / key material
    s = wif()
    P(
        "bitcoin_wif_key_bitcoin_cli_importprivkey",
        "shell_history",
        s,
        'bitcoin-cli -rpcwallet=cold importprivkey § "donation-2019" false\nbitcoin-cli -rpcwallet=cold rescanblockchain 600000',
    )
    s = xprv()
    P(
        "bip32_xprv_electrum_restore_note",
        "notes",
        s,
        "restored the old treasury wallet in electrum (File > New > Standard > Use a master key):\n§\nbalance shows 0.412 BTC, moving to the multisig tomorrow",
    )
    s = bech32("age-secret-key-", rbytes(32)).upper()
    P(
        "age_secret_key_sops_keys_txt",
        "config",
        s,
        f"# created: 2026-08-14T10:22:31+02:00\n# public key: {bech32('age', rbytes(32))}\n§",
    )
    s = openssh_ed25519("deploy@ci-runner-03")
    s = "\n  ".join(s.splitlines())  # as it sits in the YAML block scalar
    P(
        "openssh_ed25519_private_key_ansible_vars",
        "yaml",
        s,
        "deploy_user: deploy\ndeploy_ssh_private_key: |\n  §\ndeploy_known_hosts_file: files/known_hosts",
    )
    pk = pgp_armor("PRIVATE KEY BLOCK", b"\x95\x03\xc6\x04" + rbytes(620))
    P(
        "pgp_private_key_block_gh_secret_set",
        "shell_history",
        pk,
        "gh secret set GPG_PRIVATE_KEY --repo acme/release-tools --body '" + pk + "'",
    )
    body = bytes.fromhex(
        "308204bd020100300d06092a864886f70d0101010500048204a7308204a30201000282010100"
    ) + rbytes(1150)
    s = pem("PRIVATE KEY", body)
    P(
        "pkcs8_rsa_private_key_gcp_sa_json",
        "json",
        s,
        json.dumps(
            {
                "type": "service_account",
                "project_id": "acme-analytics",
                "private_key_id": rhex(40),
                "private_key": "§",
                "client_email": "etl-runner@acme-analytics.iam.gserviceaccount.com",
                "client_id": rdig(21),
                "token_uri": "https://oauth2.googleapis.com/token",
            },
            indent=2,
        ),
    )
    s = pem(
        "EC PRIVATE KEY",
        bytes.fromhex("30770201010420")
        + rbytes(32)
        + bytes.fromhex("a00a06082a8648ce3d030107a144034200")
        + b"\x04"
        + rbytes(64),
    )
    P(
        "ec_private_key_apns_p256_swift_comment",
        "code",
        s,
        '// TODO move to keychain before release\nlet apnsKey = """\n' + s + '\n"""',
    )
    ppk_priv = b64(sshstr(rbytes(32)))
    s = ppk_priv
    pub_b = b64(sshstr("ssh-ed25519") + sshstr(rbytes(32)))
    C(
        "putty_ppk_v3_private_lines",
        "config",
        s,
        f"PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: eddsa-key-20260911\nPublic-Lines: 2\n{pub_b[:64]}\n{pub_b[64:]}\nPrivate-Lines: 1\n§\nPrivate-MAC: {rhex(64)}",
    )
    sec = rbytes(32)
    s = jwt(
        {
            "iss": "supabase",
            "ref": rs(20, LOW),
            "role": "service_role",
            "iat": 1730000000,
            "exp": 2045576000,
        },
        sec,
    )
    P(
        "supabase_service_role_jwt_edge_function_env",
        "env",
        s,
        f"SUPABASE_URL=https://{rs(20, LOW)}.supabase.co\nSUPABASE_SERVICE_ROLE_KEY=§",
    )
    s = jwt(
        {
            "sub": "svc-reporting",
            "scope": "reports:read invoices:read",
            "iat": 1764460800,
            "exp": 1796000000,
            "iss": "https://auth.acme.dev",
        },
        rbytes(32),
    )
    P(
        "jwt_bearer_long_lived_httpie",
        "cli",
        s,
        "http GET https://api.acme.dev/v2/reports/monthly month==2026-11 'Authorization:Bearer §'",
    )
    s = "hcaik_01" + rs(56, LOW + DIG)
    P(
        "honeycomb_ingest_key_otel_collector",
        "yaml",
        s,
        "exporters:\n  otlp/honeycomb:\n    endpoint: api.eu1.honeycomb.io:443\n    headers:\n      x-honeycomb-team: §",
    )
    s = "xoxe-1-" + rs(140, ALNUM + "-")
    P(
        "slack_refresh_token_rotation_json",
        "json",
        s,
        json.dumps(
            {
                "ok": True,
                "app_id": "A" + rs(10, UP + DIG),
                "authed_user": {
                    "id": "U" + rs(10, UP + DIG),
                    "scope": "channels:history",
                    "token_type": "user",
                    "access_token": "xoxe.xoxp-1-" + rs(140, ALNUM + "-"),
                    "refresh_token": "§",
                    "expires_in": 43200,
                },
            }
        ),
    )
    s = "glcbt-" + rs(2, HEX) + "_" + rs(20, ALNUM + "-_")
    P(
        "gitlab_ci_build_token_clone_url_job_log",
        "log",
        s,
        "Fetching changes with git depth set to 20...\nInitialized empty Git repository in /builds/acme/ledger/.git/\nCreated fresh repository.\nremote: https://gitlab-ci-token:§@gitlab.example.org/acme/ledger.git",
    )
    s = "FlyV1 fm2_" + b64(rbytes(120))
    P(
        "flyio_deploy_token_fly_toml_comment",
        "toml",
        s,
        'app = "acme-api"\nprimary_region = "ams"\n# deploy with: FLY_API_TOKEN="§" fly deploy\n\n[http_service]\n  internal_port = 8080',
    )


def provider_prose():
    """Vendor-shaped secrets in prose: chat, commit messages, notes, tickets, markdown."""
    s = gh_style("ghp")
    P(
        "github_pat_german_chat_handover",
        "chat",
        s,
        "Hier der Token für den Release-Bot, läuft Ende Januar ab: § – bitte in die Org-Secrets übernehmen, nicht ins Repo.",
    )
    s = "sk-proj-" + rs(74, ALNUM + "-_") + "T3BlbkFJ" + rs(74, ALNUM + "-_")
    P(
        "openai_key_portuguese_chat_paste",
        "chat",
        s,
        "usa essa chave por enquanto, depois a gente cria uma por projeto: §",
    )
    s = "sk-ant-api03-" + rs(93, ALNUM + "-_") + "AA"
    P("anthropic_key_japanese_chat", "chat", s, "検証用のAPIキーです（今週中に失効させます）：§")
    s = "xoxb-" + rdig(12) + "-" + rdig(13) + "-" + rs(24)
    P(
        "slack_bot_token_commit_message_body",
        "commit",
        s,
        "feat(notify): post deploy summaries to #releases\n\nBot token for the workspace app: §\n(scopes: chat:write, channels:read)",
    )
    s = gh_style("npm")
    P(
        "npm_token_commit_message_revert_note",
        "commit",
        s,
        'Revert "ci: hardcode npm token while secrets are broken"\n\nThis reverts commit '
        + rhex(40)
        + ".\nThe token (§) has been revoked on npmjs.com.",
    )
    s = "glpat-" + rs(20, ALNUM + "-_")
    P(
        "gitlab_pat_jira_ticket_comment",
        "notes",
        s,
        'OPS-3312 — reproduced with curl against the API:\n{code}\ncurl --header "PRIVATE-TOKEN: §" https://gitlab.example.org/api/v4/projects/381/jobs?scope=failed\n{code}\nreturns 500 for any page > 40.',
    )
    s = "AIza" + rs(35, ALNUM + "-_")
    P(
        "google_maps_server_key_spanish_ticket",
        "notes",
        s,
        "Incidencia #771: la clave del servidor de geocodificación (§) alcanzó la cuota diaria a las 14:10, pedí subir el límite.",
    )
    s = "SG." + rs(22, ALNUM + "-_") + "." + rs(43, ALNUM + "-_")
    P(
        "sendgrid_key_markdown_runbook_table",
        "markdown",
        s,
        "| service | credential | owner |\n|---|---|---|\n| SendGrid (transactional) | `§` | @mkovacs |\n| Postmark (fallback) | in Vault | @mkovacs |",
    )
    s = "sk_live_51" + rs(96)
    P(
        "stripe_live_key_french_session_note",
        "notes",
        s,
        "Note de session 2026-11-28 : testé le remboursement partiel en prod avec la clé § (compte Acme SAS), remboursement re_ OK, à révoquer après.",
    )
    s = "hf_" + rs(34, UP + LOW)
    P(
        "huggingface_token_korean_chat",
        "chat",
        s,
        "모델 다운로드 토큰 공유합니다 (읽기 전용): § 다음 주에 폐기할게요",
    )
    s = "dckr_pat_" + rs(27, ALNUM + "-_")
    P(
        "dockerhub_pat_russian_chat",
        "chat",
        s,
        "для пуша в docker hub используй токен § , пользователь acmebuild",
    )
    s = "xai-" + rs(80)
    P(
        "xai_key_italian_chat",
        "chat",
        s,
        "ecco la chiave xAI che mi hai chiesto, è sul budget del team ML: §",
    )
    s = f"{rdig(10)}:AA{rs(33, ALNUM + '-_')}"
    P(
        "telegram_bot_token_ukrainian_chat",
        "chat",
        s,
        "Токен бота для алертів: § — чат id -100" + rdig(10),
    )
    s = "sk-or-v1-" + rhex(64)
    P(
        "openrouter_key_aider_session_log",
        "log",
        s,
        "$ aider --model openrouter/deepseek/deepseek-chat-v3 --api-key openrouter=§\nAider v0.86.1\nModel: openrouter/deepseek/deepseek-chat-v3 with diff edit format\nGit repo: .git with 412 files",
    )
    s = "AGE-SECRET-KEY-1" + bech32("age-secret-key-", rbytes(32)).upper()[16:]
    P(
        "age_secret_key_chat_paste_for_sops",
        "chat",
        s,
        "decrypt works on my side now. if you need to edit secrets/prod.yaml before I'm back, the age key is § (I'll rotate it Monday)",
    )
    s = gh_style("ghp")
    P(
        "github_pat_markdown_issue_repro_steps",
        "markdown",
        s,
        "### Steps to reproduce\n1. `export GITHUB_TOKEN=§`\n2. `acme-cli sync --org acme`\n3. observe `403 resource not accessible by integration`",
    )
    s = "lin_api_" + rs(40)
    P(
        "linear_key_polish_commit_body",
        "commit",
        s,
        "feat(triage): automatyczne etykiety w Linear\n\nKlucz API (tymczasowy, do usunięcia): §",
    )
    s = "pplx-" + rs(48)
    P(
        "perplexity_key_turkish_chat",
        "chat",
        s,
        "araştırma botu için anahtar bu: § , limit günde 500 istek",
    )
    s = "rk_live_51" + rs(96)
    P(
        "stripe_restricted_key_dutch_notes",
        "notes",
        s,
        "Overdracht: de restricted key voor de boekhoudkoppeling is §, rechten alleen read op charges en payouts.",
    )
    s = "glsa_" + rs(32) + "_"
    s = s + format(zlib.crc32(s.encode()), "08x")
    P(
        "grafana_token_chinese_chat",
        "chat",
        s,
        "给 CI 用的 Grafana 服务账号 token：§ ，只有 Editor 权限",
    )


BIP = [
    "ocean",
    "tiger",
    "velvet",
    "orbit",
    "ribbon",
    "canyon",
    "garden",
    "hammer",
    "jungle",
    "ladder",
    "lemon",
    "marble",
    "napkin",
    "pepper",
    "rocket",
    "saddle",
    "timber",
    "walnut",
    "zebra",
    "crystal",
    "dolphin",
    "eagle",
    "fossil",
    "galaxy",
    "harvest",
    "island",
    "jacket",
    "kitten",
    "lobster",
    "mountain",
    "noodle",
    "oyster",
    "panda",
    "quantum",
    "raven",
    "salmon",
    "tomato",
    "umbrella",
    "violin",
    "wagon",
    "yellow",
    "bridge",
    "cactus",
    "dinosaur",
    "engine",
    "festival",
    "giraffe",
    "horse",
    "invest",
    "jewel",
    "kingdom",
    "lunar",
    "magnet",
    "nephew",
    "olive",
    "pistol",
    "rabbit",
    "siren",
    "tunnel",
    "uncle",
    "vendor",
    "window",
    "youth",
    "zone",
    "absorb",
    "brisk",
    "copper",
    "drastic",
    "episode",
    "frown",
]


def mnemonic(n=12):
    return " ".join(R.choice(BIP) for _ in range(n))


def phrase():
    w = [
        "correct",
        "lantern",
        "bicycle",
        "orange",
        "thunder",
        "pillow",
        "seventy",
        "granite",
        "moss",
        "kettle",
        "harbour",
        "violet",
        "paper",
        "cloud",
        "winter",
        "copper",
        "basket",
        "saturn",
        "lizard",
        "meadow",
    ]
    return "-".join(R.choice(w) for _ in range(R.choice([4, 5])))


# ---------------------------------------------------------------- context
def context():
    # --- chat in many languages
    langs = [
        (
            "german_chat_vpn_password",
            "Kannst du dich nochmal ins VPN einwählen? Benutzer ist vpn-buchhaltung, Passwort § – bitte nach dem Login gleich ändern.",
        ),
        (
            "french_chat_wifi_guest",
            "Pour le wifi invités c'est le réseau ACME-Guest, mot de passe : § (valable jusqu'à vendredi).",
        ),
        (
            "spanish_chat_db_prod",
            "Oye, la contraseña de la base de producción es § , no la pegues en el canal general porfa",
        ),
        (
            "portuguese_br_chat_server_root",
            "Cara, consegui acesso ao servidor. Usuário root e a senha é §. Depois troca, ok?",
        ),
        (
            "italian_chat_admin_panel",
            "Ti giro le credenziali del pannello admin: utente admin, password §. Cancella il messaggio quando hai fatto.",
        ),
        (
            "dutch_chat_nas_login",
            "De NAS staat weer aan, inloggen met beheerder / § en daarna even de schijven controleren.",
        ),
        ("polish_chat_jenkins", "Hasło do Jenkinsa zmieniłem na §, stare już nie działa."),
        ("russian_chat_ftp", "Залил билд на FTP, логин deploy, пароль §. Забери до вечера."),
        ("ukrainian_chat_grafana", "Пароль від графани: §, логін той самий що й раніше."),
        (
            "turkish_chat_mail_account",
            "Destek hesabının şifresi § , IMAP ayarlarını da değiştirdim.",
        ),
        (
            "japanese_chat_staging_basic_auth",
            "ステージングのBasic認証は user: staging / パスワード: § です。外部には共有しないでください。",
        ),
        (
            "korean_chat_router_admin",
            "사무실 공유기 관리자 비밀번호는 § 입니다. 포트포워딩 끝나면 바꿔주세요.",
        ),
        ("chinese_simplified_chat_redis", "redis 的密码改成 § 了，记得更新一下 .env"),
        ("chinese_traditional_chat_kiosk", "展示機的管理密碼是 §，開機後按五下右上角就能進設定。"),
        ("vietnamese_chat_cpanel", "Mật khẩu cPanel mới là §, anh đăng nhập thử xem được chưa."),
        (
            "indonesian_chat_server_ssh",
            "Mas, password SSH server staging sekarang §, user-nya tetap ubuntu.",
        ),
        ("arabic_chat_email_password", "كلمة المرور الجديدة لحساب البريد هي § من فضلك لا تشاركها"),
        ("hindi_chat_laptop_password", "ऑफिस लैपटॉप का पासवर्ड § है, सोमवार को IT से बदलवा लेना।"),
        ("urdu_chat_wifi", "دفتر کے وائی فائی کا پاس ورڈ § ہے"),
        ("estonian_chat_portal", "Portaali parool on nüüd §, kasutajanimi jäi samaks."),
        ("latvian_chat_db", "Datubāzes parole ir §, lūdzu neliec to Git repozitorijā."),
        (
            "lithuanian_chat_admin",
            "Administratoriaus slaptažodis: § – pakeisk po pirmo prisijungimo.",
        ),
        ("slovak_chat_vpn", "Heslo do VPN je §, platí do konca mesiaca."),
        ("slovenian_chat_printer", "Geslo za tiskalnik v drugem nadstropju je §."),
        ("croatian_chat_wordpress", "Lozinka za WordPress admin je §, korisnik urednik."),
        ("bulgarian_chat_server", "Паролата за сървъра е §, потребител admin."),
        ("icelandic_chat_wifi", "Lykilorðið á þráðlausa netinu er §"),
        (
            "afrikaans_chat_backup",
            "Die wagwoord vir die rugsteun-skyf is §, moenie dit vergeet nie.",
        ),
        ("georgian_chat_panel", "პანელის პაროლი არის §, შესვლის შემდეგ შეცვალე."),
        ("kazakh_chat_mail", "Поштаның құпия сөзі: § , ертең ауыстырамыз."),
        ("tamil_chat_server", "சர்வர் கடவுச்சொல் § , யாரிடமும் பகிர வேண்டாம்."),
        ("welsh_chat_cms", "Cyfrinair y CMS yw § – newidia fe ar ôl mewngofnodi."),
        ("basque_chat_wifi", "Wifi-aren pasahitza § da."),
        ("galician_chat_db", "O contrasinal da base de datos é §, non o compartas."),
        (
            "swedish_chat_bastion",
            "Lösenordet till bastion-hosten är § , jag roterar det efter releasen.",
        ),
        (
            "mixed_spanglish_chat_deploy",
            "ya quedó el deploy, el user del dashboard es ops y la pass es § , cualquier cosa me dices",
        ),
    ]
    for kind, text in langs:
        C(kind, "chat", pw(), text)
    # chat / notes, English
    C(
        "slack_thread_reply_shared_admin_password",
        "chat",
        pw(),
        "[10:42] priya: which creds for the old Magento admin?\n[10:43] tom: admin@acme-shop.local / §\n[10:43] tom: it's the only account left, don't lock it out",
    )
    C(
        "standup_note_temp_password_for_new_hire",
        "notes",
        pw_rand(14),
        "## Standup 2026-11-27\n- onboarding Jana today: laptop ready, temp AD password § (must change at first logon)\n- release train blocked on #4411",
    )
    C(
        "irc_log_oper_password",
        "chat",
        pw_rand(16),
        "[21:03] <mkl> /oper mkl §\n[21:03] -irc.acme.chat- You are now an IRC operator",
    )
    C(
        "signal_export_door_code",
        "chat",
        rdig(6),
        "[2026-11-12 08:01] Marta: door code for the server room changed to § , the old one stops working at noon",
    )
    C(
        "voice_memo_transcript_banking_pin",
        "notes",
        rdig(4),
        'Transcript 00:01:12 — "…and the PIN for the company card is § , I\'ll text you the CVV separately…"',
    )
    C(
        "sim_card_puk_in_ticket",
        "notes",
        rdig(8),
        "IT-4821: replaced SIM on the on-call phone. PIN 0000 disabled, PUK § taped in the drawer, please move it to the vault.",
    )
    C(
        "handover_doc_bios_supervisor_password",
        "markdown",
        pw_rand(12),
        "### Hardware\n| host | BIOS supervisor pw | iLO |\n|---|---|---|\n| build-01 | `§` | https://10.20.0.11 |",
    )
    C(
        "luks_passphrase_in_runbook",
        "markdown",
        phrase(),
        "## Recovering the backup disk\n1. `cryptsetup open /dev/sdb1 backup`\n2. passphrase: `§`\n3. `mount /dev/mapper/backup /mnt/backup`",
    )
    C(
        "zip_password_in_email_body",
        "chat",
        pw_rand(14),
        "Hi Lena,\n\nthe exported payroll file is attached (payroll_2026_11.zip). The archive password is § .\n\nBest,\nKlaus",
    )
    C(
        "bitlocker_recovery_key_ticket",
        "notes",
        "-".join(rdig(6) for _ in range(8)),
        "Ticket #20931 – laptop LT-0442 asked for BitLocker recovery after BIOS update.\nRecovery key: §\nUser back online 09:14.",
    )
    C(
        "bip39_mnemonic_note_to_self",
        "notes",
        mnemonic(12),
        "metamask (work test wallet, holds gas for the bridge bot):\n§",
    )
    C(
        "bip39_mnemonic_24_words_env",
        "env",
        mnemonic(24),
        'BRIDGE_RPC_URL=https://arb-mainnet.g.alchemy.com/v2/${ALCHEMY_KEY}\nBRIDGE_MNEMONIC="§"\nBRIDGE_CHAIN_ID=42161',
    )
    s = "0x" + rhex(64)
    C(
        "ethereum_private_key_hardhat_config",
        "code",
        s,
        "module.exports = {\n  solidity: '0.8.28',\n  networks: {\n    sepolia: {\n      url: 'https://sepolia.infura.io/v3/' + process.env.INFURA_ID,\n      accounts: ['§'],\n    },\n  },\n};",
    )
    s = rhex(64)
    C(
        "ethereum_private_key_foundry_cast_send",
        "shell_history",
        s,
        f"cast send 0x{rhex(40)} 'setFee(uint256)' 25 --rpc-url $MAINNET_RPC --private-key §",
    )
    s = "[" + ",".join(str(R.randrange(256)) for _ in range(64)) + "]"
    C("solana_keypair_json_array", "json", s, "$ cat ~/.config/solana/treasury.json\n§")
    C(
        "totp_seed_base32_otpauth_uri",
        "url",
        rs(32, B32),
        "otpauth://totp/AWS:root@acme-prod?secret=§&issuer=Amazon%20Web%20Services",
    )
    C(
        "totp_seed_manual_entry_notes",
        "notes",
        " ".join(rs(4, B32).lower() for _ in range(8)),
        "2FA for the shared support@ mailbox — couldn't scan the QR so used manual entry:\n§\n(if the phone dies, this is the only copy)",
    )
    C(
        "backup_recovery_codes_github",
        "notes",
        rhex(5) + "-" + rhex(5),
        f"GitHub recovery codes (org owner account):\n{rhex(5)}-{rhex(5)}\n§\n{rhex(5)}-{rhex(5)}",
    )
    C(
        "wifi_wpa_supplicant_psk",
        "config",
        pw(),
        'network={\n    ssid="ACME-Lab"\n    psk="§"\n    key_mgmt=WPA-PSK\n}',
    )
    C(
        "ipsec_psk_strongswan_secrets",
        "config",
        rs(32, ALNUM + "+/"),
        ': PSK "§"\n%any vpn.acme.dev : PSK "§"',
    )
    s = b64(rbytes(32))
    C(
        "wireguard_private_key_wg0_conf",
        "ini",
        s,
        f"[Interface]\nAddress = 10.8.0.3/24\nPrivateKey = §\nDNS = 10.8.0.1\n\n[Peer]\nPublicKey = {b64(rbytes(32))}\nEndpoint = vpn.acme.dev:51820\nAllowedIPs = 10.8.0.0/24",
    )
    C(
        "snmp_community_string_cisco_config",
        "config",
        rs(14, ALNUM),
        "snmp-server community § RO 10\nsnmp-server location DC2-rack14\nsnmp-server contact noc@acme.dev",
    )
    C(
        "tacacs_key_cisco_running_config",
        "config",
        pw_rand(18),
        "tacacs server ISE-01\n address ipv4 10.10.4.20\n key 0 §\n timeout 5",
    )
    # --- .env / dotenv / shell exports
    C(
        "django_secret_key_env",
        "env",
        rs(50, LOW + DIG + "!@#%^&*(-_=+)"),
        "DJANGO_DEBUG=False\nDJANGO_SECRET_KEY=§\nDJANGO_ALLOWED_HOSTS=api.acme.dev",
    )
    C(
        "rails_secret_key_base_env",
        "env",
        rhex(128),
        "RAILS_ENV=production\nSECRET_KEY_BASE=§\nRAILS_LOG_TO_STDOUT=1",
    )
    C(
        "nextauth_secret_vercel_env_pull",
        "env",
        b64(rbytes(32)),
        '# Created by Vercel CLI\nNEXTAUTH_URL="https://app.acme.dev"\nNEXTAUTH_SECRET="§"\nVERCEL_ENV="production"',
    )
    C(
        "laravel_app_key_base64_env",
        "env",
        "base64:" + b64(rbytes(32)),
        "APP_NAME=Acme\nAPP_ENV=production\nAPP_KEY=§\nAPP_DEBUG=false",
    )
    C(
        "mistral_api_key_plain_env",
        "env",
        rs(32),
        "MISTRAL_API_KEY=§\nMISTRAL_MODEL=mistral-large-latest",
    )
    C("cohere_api_key_plain_env", "env", rs(40), "CO_API_KEY=§\nRERANK_MODEL=rerank-v3.5")
    C(
        "datadog_api_key_agent_install_oneliner",
        "cli",
        rhex(32),
        'DD_API_KEY=§ DD_SITE="datadoghq.eu" bash -c "$(curl -L https://install.datadoghq.com/scripts/install_script_agent7.sh)"',
    )
    C(
        "datadog_app_key_terraform_env",
        "shell_history",
        rhex(40),
        f"export DD_API_KEY={rhex(32)}\nexport DD_APP_KEY=§\nterraform -chdir=monitors plan",
    )
    C(
        "cloudflare_api_token_plain_wrangler_env",
        "env",
        rs(40, ALNUM + "-_"),
        "CLOUDFLARE_ACCOUNT_ID=" + rhex(32) + "\nCLOUDFLARE_API_TOKEN=§",
    )
    C(
        "hetzner_cloud_token_hcloud_context",
        "toml",
        rs(64),
        'active_context = "prod"\n\n[[contexts]]\n  name = "prod"\n  token = "§"',
    )
    C(
        "linode_token_env_export",
        "shell_history",
        rhex(64),
        "export LINODE_TOKEN=§\nlinode-cli linodes list --format label,status,ipv4",
    )
    C(
        "jenkins_cli_auth_admin_password",
        "shell_history",
        pw_rand(24),
        "java -jar jenkins-cli.jar -s https://ci.acme.dev/ -auth admin:§ safe-restart",
    )
    C(
        "codecov_upload_token_uuid_cli",
        "cli",
        uuid4(),
        "./codecov upload-process --disable-search -t § -f coverage.xml -F unit",
    )
    C(
        "snyk_token_uuid_env_ci",
        "yaml",
        uuid4(),
        "  security:\n    image: snyk/snyk:node\n    variables:\n      SNYK_TOKEN: §\n    script:\n      - snyk test --severity-threshold=high",
    )
    C(
        "sentry_dsn_secret_legacy_format",
        "env",
        rhex(32),
        f"SENTRY_DSN=https://{rhex(32)}:§@o{rdig(6)}.ingest.sentry.io/{rdig(7)}",
    )
    C(
        "bugsnag_api_key_rails_initializer",
        "code",
        rhex(32),
        'Bugsnag.configure do |config|\n  config.api_key = "§"\n  config.notify_release_stages = %w[production staging]\nend',
    )
    C(
        "twitch_client_secret_env",
        "env",
        rs(30, LOW + DIG),
        f"TWITCH_CLIENT_ID={rs(30, LOW + DIG)}\nTWITCH_CLIENT_SECRET=§",
    )
    C(
        "auth0_client_secret_env_local",
        "env",
        rs(64, ALNUM + "-_"),
        f"AUTH0_DOMAIN=acme.eu.auth0.com\nAUTH0_CLIENT_ID={rs(32)}\nAUTH0_CLIENT_SECRET=§\nAUTH0_SECRET={rhex(64)}",
    )
    C(
        "plaid_secret_env_sandbox_vs_prod",
        "env",
        rhex(30),
        f"PLAID_CLIENT_ID={rhex(24)}\nPLAID_SECRET=§\nPLAID_ENV=production",
    )
    C(
        "paypal_client_secret_env",
        "env",
        rs(80, ALNUM + "-_"),
        f"PAYPAL_MODE=live\nPAYPAL_CLIENT_ID=A{rs(79, ALNUM + '-_')}\nPAYPAL_CLIENT_SECRET=§",
    )
    C("wandb_api_key_netrc", "config", rhex(40), "machine api.wandb.ai\n  login user\n  password §")
    C(
        "roboflow_api_key_fish_set_universal",
        "shell_history",
        rhex(32),
        "set -Ux ROBOFLOW_API_KEY §\nroboflow download -f yolov8 acme/pallets/3",
    )
    C(
        "github_webhook_secret_probot_env",
        "env",
        rhex(40),
        f"APP_ID={rdig(6)}\nWEBHOOK_SECRET=§\nPRIVATE_KEY_PATH=./app.pem",
    )
    C(
        "generic_hmac_signing_key_envrc",
        "env",
        rhex(64),
        "# .envrc\nexport WEBHOOK_HMAC_KEY=§\nexport PORT=8088",
    )
    C(
        "jwt_secret_node_env_fallback",
        "code",
        pw_rand(32, "-_"),
        "const JWT_SECRET = process.env.JWT_SECRET || '§';\nexport const sign = (p) => jwt.sign(p, JWT_SECRET, { expiresIn: '7d' });",
    )
    C(
        "session_secret_express_session",
        "code",
        rs(28, ALNUM),
        "app.use(session({\n  secret: '§',\n  resave: false,\n  saveUninitialized: false,\n  cookie: { secure: true },\n}));",
    )
    # --- connection strings
    C(
        "postgres_url_sqlalchemy_alembic_ini",
        "ini",
        pw(),
        "[alembic]\nscript_location = migrations\nsqlalchemy.url = postgresql+psycopg://ledger_app:§@db-ledger.internal:5432/ledger",
    )
    C(
        "mysql_dsn_go_sql_driver",
        "code",
        pw_rand(16),
        'db, err := sql.Open("mysql", "reporting:§@tcp(mysql-ro.acme.internal:3306)/analytics?parseTime=true&tls=preferred")',
    )
    C(
        "mongodb_srv_uri_mongosh_history",
        "shell_history",
        pw_rand(16, "-_"),
        'mongosh "mongodb+srv://cluster0.ab1cd.mongodb.net/orders" --apiVersion 1 --username orders_rw --password §',
    )
    C(
        "mongodb_uri_in_compose_env",
        "compose",
        pw(),
        "services:\n  api:\n    build: .\n    environment:\n      MONGO_URL: mongodb://api:§@mongo:27017/api?authSource=admin\n    depends_on: [mongo]",
    )
    C(
        "redis_url_rediss_celery_broker",
        "code",
        rs(32),
        'CELERY_BROKER_URL = "rediss://default:§@redis-12345.c1.eu-west-1-2.ec2.redns.redis-cloud.com:12345/0?ssl_cert_reqs=required"',
    )
    C(
        "amqp_url_rabbitmq_spring_yaml",
        "yaml",
        pw(),
        "spring:\n  rabbitmq:\n    addresses: amqps://orders:§@rabbit.acme.internal:5671/orders-vhost",
    )
    C(
        "mssql_ado_connection_string_web_config",
        "xml",
        pw(),
        '<connectionStrings>\n  <add name="Default" connectionString="Server=tcp:sql-acme.database.windows.net,1433;Initial Catalog=crm;User ID=crm_app;Password=§;Encrypt=True;" providerName="System.Data.SqlClient" />\n</connectionStrings>',
    )
    C(
        "oracle_jdbc_thin_url_with_password",
        "config",
        pw_rand(14),
        "spring.datasource.url=jdbc:oracle:thin:billing/§@//ora-scan.acme.internal:1521/BILLPDB",
    )
    C(
        "snowflake_password_dbt_profiles",
        "yaml",
        pw(),
        "acme:\n  target: prod\n  outputs:\n    prod:\n      type: snowflake\n      account: xy12345.eu-central-1\n      user: DBT_RUNNER\n      password: §\n      role: TRANSFORMER\n      warehouse: TRANSFORM_WH\n      database: ANALYTICS\n      schema: marts",
    )
    C(
        "clickhouse_password_grafana_datasource_yaml",
        "yaml",
        pw_rand(20),
        "apiVersion: 1\ndatasources:\n  - name: ClickHouse\n    type: grafana-clickhouse-datasource\n    jsonData:\n      host: ch.acme.internal\n      port: 9440\n      username: grafana_ro\n      secure: true\n    secureJsonData:\n      password: §",
    )
    C(
        "cassandra_password_datastax_driver_conf",
        "config",
        pw(),
        'datastax-java-driver {\n  basic.contact-points = ["10.0.3.11:9042"]\n  advanced.auth-provider {\n    class = PlainTextAuthProvider\n    username = events_svc\n    password = "§"\n  }\n}',
    )
    C(
        "neo4j_auth_env_docker_run",
        "cli",
        pw(),
        "docker run -d --name graph -p 7474:7474 -p 7687:7687 -e NEO4J_AUTH=neo4j/§ neo4j:5.26",
    )
    C(
        "kafka_sasl_jaas_config_properties",
        "config",
        pw_rand(20),
        f'security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="{rs(16, UP + DIG)}" password="§";',
    )
    C(
        "elasticsearch_basic_auth_filebeat",
        "yaml",
        pw_rand(20),
        'output.elasticsearch:\n  hosts: ["https://es01.acme.internal:9200"]\n  username: "filebeat_writer"\n  password: "§"\n  ssl.certificate_authorities: ["/etc/filebeat/ca.crt"]',
    )
    C(
        "influxdb_token_telegraf_conf",
        "toml",
        b64(rbytes(64)).replace("+", "-").replace("/", "_"),
        '[[outputs.influxdb_v2]]\n  urls = ["https://influx.acme.internal:8086"]\n  token = "§"\n  organization = "acme"\n  bucket = "host-metrics"',
    )
    C(
        "ldap_bind_password_gitlab_rb",
        "code",
        pw(),
        "gitlab_rails['ldap_servers'] = {\n  'main' => {\n    'label' => 'ACME AD',\n    'host' => 'dc01.corp.acme.dev',\n    'port' => 636,\n    'encryption' => 'simple_tls',\n    'bind_dn' => 'CN=svc-gitlab,OU=Service,DC=corp,DC=acme,DC=dev',\n    'password' => '§',\n  }\n}",
    )
    C(
        "smtp_password_grafana_ini",
        "ini",
        pw_rand(16),
        '[smtp]\nenabled = true\nhost = smtp.office365.com:587\nuser = alerts@acme.dev\npassword = """§"""\nfrom_address = alerts@acme.dev',
    )
    C(
        "ftp_url_lftp_mirror_cron",
        "config",
        pw(),
        "30 2 * * * lftp -e 'mirror -R /var/www/html /public_html; bye' ftp://webdeploy:§@ftp.hosting-provider.example",
    )
    C(
        "sftp_password_filezilla_sitemanager_plain",
        "xml",
        pw(),
        "<Server>\n  <Host>sftp.partner.example</Host>\n  <Port>22</Port>\n  <Protocol>1</Protocol>\n  <Type>0</Type>\n  <User>acme_drop</User>\n  <Pass>§</Pass>\n  <Logontype>1</Logontype>\n</Server>",
    )
    # --- YAML / k8s / compose / Helm
    C(
        "k8s_secret_stringdata_db_password",
        "k8s",
        pw(),
        'apiVersion: v1\nkind: Secret\nmetadata:\n  name: ledger-db\ntype: Opaque\nstringData:\n  DB_USER: ledger\n  DB_PASSWORD: "§"',
    )
    s = b64(pw().encode())
    C(
        "k8s_secret_data_base64_password",
        "k8s",
        s,
        f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: smtp-relay\ndata:\n  username: {b64(b'relay@acme.dev')}\n  password: §",
    )
    C(
        "helm_values_postgresql_auth",
        "yaml",
        pw_rand(18),
        "postgresql:\n  enabled: true\n  auth:\n    username: keycloak\n    password: §\n    database: keycloak",
    )
    C(
        "compose_mysql_root_password",
        "compose",
        pw(),
        "services:\n  db:\n    image: mysql:8.4\n    environment:\n      MYSQL_ROOT_PASSWORD: §\n      MYSQL_DATABASE: wiki\n    volumes:\n      - dbdata:/var/lib/mysql",
    )
    C(
        "compose_minio_root_password_list_syntax",
        "compose",
        pw_rand(24),
        "  minio:\n    image: minio/minio:RELEASE.2025-09-07T16-13-09Z\n    command: server /data --console-address :9001\n    environment:\n      - MINIO_ROOT_USER=minioadmin-prod\n      - MINIO_ROOT_PASSWORD=§",
    )
    C(
        "ansible_inventory_become_pass",
        "ini",
        pw(),
        "[db]\npg-01 ansible_host=10.0.5.11\n\n[db:vars]\nansible_user=ops\nansible_become_pass=§",
    )
    C(
        "ansible_vars_vault_password_plain",
        "yaml",
        pw_rand(20),
        '---\nkeycloak_admin_user: admin\nkeycloak_admin_password: "§"\nkeycloak_hostname: sso.acme.dev',
    )
    C(
        "gitlab_ci_variables_plain_password",
        "yaml",
        pw(),
        'variables:\n  DOCKER_DRIVER: overlay2\n  REGISTRY_USER: deploy\n  REGISTRY_PASSWORD: "§"\n\nbuild:\n  script:\n    - docker login -u $REGISTRY_USER -p $REGISTRY_PASSWORD registry.acme.dev',
    )
    C(
        "github_workflow_env_literal_password",
        "yaml",
        pw_rand(16),
        "jobs:\n  e2e:\n    runs-on: ubuntu-latest\n    env:\n      E2E_ADMIN_EMAIL: qa-admin@acme.dev\n      E2E_ADMIN_PASSWORD: §\n    steps:\n      - uses: actions/checkout@v4",
    )
    C(
        "azure_pipelines_variable_plain",
        "yaml",
        pw(),
        "variables:\n  buildConfiguration: Release\n  sqlAdminLogin: sqladmin\n  sqlAdminPassword: '§'",
    )
    C(
        "prometheus_basic_auth_scrape_config",
        "yaml",
        pw_rand(20),
        "scrape_configs:\n  - job_name: edge-nodes\n    scheme: https\n    basic_auth:\n      username: prom\n      password: §\n    static_configs:\n      - targets: ['edge-1.acme.dev:9100']",
    )
    C(
        "alertmanager_smtp_auth_password",
        "yaml",
        pw_rand(16),
        "global:\n  smtp_smarthost: 'smtp.gmail.com:587'\n  smtp_from: 'alerts@acme.dev'\n  smtp_auth_username: 'alerts@acme.dev'\n  smtp_auth_password: '§'",
    )
    C(
        "keycloak_realm_json_client_secret",
        "json",
        rs(32),
        json.dumps(
            {
                "clientId": "grafana",
                "enabled": True,
                "clientAuthenticatorType": "client-secret",
                "secret": "§",
                "redirectUris": ["https://grafana.acme.dev/*"],
            },
            indent=2,
        ),
    )
    C(
        "argocd_repo_secret_password",
        "k8s",
        pw_rand(20),
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: repo-infra\n  namespace: argocd\n  labels:\n    argocd.argoproj.io/secret-type: repository\nstringData:\n  type: git\n  url: https://git.acme.dev/platform/infra.git\n  username: argocd\n  password: §",
    )
    C(
        "traefik_basic_auth_label_plaintext_note",
        "compose",
        pw(),
        '    labels:\n      - "traefik.http.routers.dash.middlewares=auth"\n      # admin / §  (hash below generated with htpasswd -nb)\n      - "traefik.http.middlewares.auth.basicauth.users=admin:$$apr1$$'
        + rs(8)
        + "$$"
        + rs(22, ALNUM + "./")
        + '"',
    )
    # --- TOML / INI / XML / HCL / Dockerfile
    C(
        "pgpass_file_line",
        "config",
        pw(),
        "# hostname:port:database:username:password\ndb-ledger.internal:5432:ledger:ledger_app:§\n*:*:*:postgres:§",
    )
    C(
        "my_cnf_client_password",
        "ini",
        pw_rand(16),
        '[client]\nuser=backup\npassword="§"\nhost=mysql-primary.acme.internal',
    )
    C(
        "odbc_ini_pwd",
        "ini",
        pw(),
        "[Warehouse]\nDriver=/opt/snowflake/snowflakeodbc/lib/universal/libSnowflake.dylib\nServer=xy12345.snowflakecomputing.com\nUID=BI_READER\nPWD=§\nWarehouse=BI_WH",
    )
    C(
        "pip_conf_extra_index_userinfo",
        "ini",
        pw_rand(20),
        "[global]\nextra-index-url = https://build:§@pypi.acme.internal/simple/",
    )
    C(
        "npmrc_auth_base64_userpass",
        "config",
        b64(f"ci:{pw()}".encode()),
        "registry=https://nexus.acme.internal/repository/npm-group/\n_auth=§\nalways-auth=true\nemail=ci@acme.dev",
    )
    C(
        "maven_settings_xml_server_password",
        "xml",
        pw(),
        "<settings>\n  <servers>\n    <server>\n      <id>acme-releases</id>\n      <username>deployer</username>\n      <password>§</password>\n    </server>\n  </servers>\n</settings>",
    )
    C(
        "nuget_config_cleartext_password",
        "xml",
        pw_rand(18),
        '<packageSourceCredentials>\n  <AcmeFeed>\n    <add key="Username" value="build" />\n    <add key="ClearTextPassword" value="§" />\n  </AcmeFeed>\n</packageSourceCredentials>',
    )
    C(
        "tomcat_users_xml_manager_password",
        "xml",
        pw(),
        '<tomcat-users>\n  <role rolename="manager-gui"/>\n  <user username="tomcat-admin" password="§" roles="manager-gui,manager-script"/>\n</tomcat-users>',
    )
    C(
        "hcl_terraform_tfvars_db_password",
        "hcl",
        pw_rand(20),
        'environment      = "prod"\ninstance_class   = "db.r6g.large"\ndb_username      = "ledger"\ndb_password      = "§"',
    )
    C(
        "hcl_vault_approle_secret_id_plain",
        "hcl",
        uuid4(),
        'auto_auth {\n  method "approle" {\n    config = {\n      role_id_file_path = "/etc/vault/role-id"\n      secret_id         = "§"\n    }\n  }\n}',
    )
    C(
        "hcl_nomad_template_inline_password",
        "hcl",
        pw(),
        'template {\n  data        = <<EOH\nPGUSER=metrics\nPGPASSWORD=§\nEOH\n  destination = "secrets/db.env"\n  env         = true\n}',
    )
    C(
        "dockerfile_env_password_literal",
        "dockerfile",
        pw(),
        "FROM postgres:17\nENV POSTGRES_USER=app\nENV POSTGRES_PASSWORD=§\nCOPY init.sql /docker-entrypoint-initdb.d/",
    )
    C(
        "dockerfile_run_git_clone_token_url",
        "dockerfile",
        rs(40, ALNUM),
        'FROM golang:1.23 AS build\nWORKDIR /src\nRUN git config --global url."https://build-bot:§@git.acme.dev/".insteadOf "https://git.acme.dev/"\nRUN go mod download',
    )
    C(
        "toml_streamlit_secrets",
        "toml",
        pw(),
        '[connections.warehouse]\ndialect = "postgresql"\nhost = "warehouse.acme.internal"\nport = "5432"\ndatabase = "bi"\nusername = "streamlit"\npassword = "§"',
    )
    C(
        "toml_pyproject_poetry_http_basic_note",
        "toml",
        pw_rand(20),
        '# poetry config http-basic.acme build §\n[[tool.poetry.source]]\nname = "acme"\nurl = "https://pypi.acme.internal/simple/"\npriority = "supplemental"',
    )
    C(
        "ini_supervisord_inet_http_password",
        "ini",
        pw(),
        "[inet_http_server]\nport=0.0.0.0:9001\nusername=ops\npassword=§",
    )
    C(
        "ini_php_ini_smtp_password",
        "ini",
        pw_rand(14),
        "[mail function]\nSMTP = smtp.mailjet.com\nsmtp_port = 587\nauth_username = "
        + rhex(32)
        + "\nauth_password = §",
    )
    C(
        "xml_log4j_smtp_appender_password",
        "xml",
        pw(),
        '<SMTP name="Mail" subject="[prod] error" to="oncall@acme.dev" from="app@acme.dev" smtpHost="smtp.acme.dev" smtpPort="587" smtpUsername="app" smtpPassword="§" bufferSize="50"/>',
    )
    C(
        "xml_android_strings_api_secret",
        "xml",
        rs(40),
        '<resources>\n    <string name="app_name">Acme Field</string>\n    <string name="backend_client_secret">§</string>\n</resources>',
    )
    C(
        "plist_keychain_fallback_password",
        "xml",
        pw(),
        "<dict>\n\t<key>ServerURL</key>\n\t<string>https://mdm.acme.dev</string>\n\t<key>EnrollmentPassword</key>\n\t<string>§</string>\n</dict>",
    )
    C(
        "systemd_unit_environment_password",
        "ini",
        pw_rand(18),
        "[Service]\nUser=exporter\nEnvironment=DATA_SOURCE_NAME=postgresql://exporter:§@localhost:5432/postgres?sslmode=disable\nExecStart=/usr/local/bin/postgres_exporter",
    )
    C(
        "nginx_proxy_set_header_authorization_basic",
        "config",
        b64(f"svc-proxy:{pw()}".encode()),
        'location /upstream/ {\n    proxy_pass https://legacy.partner.example/;\n    proxy_set_header Authorization "Basic §";\n}',
    )
    C(
        "apache_ldap_bind_password_directive",
        "config",
        pw(),
        '<Location /svn>\n  AuthLDAPURL "ldaps://dc01.corp.acme.dev/OU=Users,DC=corp,DC=acme,DC=dev?sAMAccountName"\n  AuthLDAPBindDN "svc-svn@corp.acme.dev"\n  AuthLDAPBindPassword "§"\n</Location>',
    )
    C(
        "haproxy_stats_auth",
        "config",
        pw_rand(14),
        "listen stats\n    bind :8404\n    stats enable\n    stats uri /stats\n    stats auth admin:§",
    )
    C(
        "openvpn_auth_user_pass_file",
        "config",
        pw(),
        "$ cat /etc/openvpn/client/auth.txt\nvpn-oslo-gw\n§",
    )
    C(
        "docker_config_json_auth_base64",
        "json",
        b64(f"robot$ci:{rs(32)}".encode()),
        json.dumps({"auths": {"harbor.acme.dev": {"auth": "§"}}}, indent=1),
    )
    C(
        "rclone_s3_secret_plain",
        "ini",
        aws_secret(),
        f"[wasabi]\ntype = s3\nprovider = Wasabi\naccess_key_id = {rs(20, UP + DIG)}\nsecret_access_key = §\nendpoint = s3.eu-central-2.wasabisys.com",
    )
    C(
        "restic_password_env_backup_script",
        "code",
        phrase(),
        "#!/bin/sh\nexport RESTIC_REPOSITORY=s3:s3.eu-west-1.amazonaws.com/acme-backups/hosts\nexport RESTIC_PASSWORD='§'\nrestic backup /etc /srv --exclude-caches",
    )
    C(
        "borg_passphrase_cron",
        "config",
        phrase(),
        "0 3 * * * BORG_PASSPHRASE='§' borg create --stats ssh://borg@backup.acme.internal/./host1::{now} /home",
    )
    C(
        "jenkins_credentials_xml_password",
        "xml",
        pw(),
        "<com.cloudbees.plugins.credentials.impl.UsernamePasswordCredentialsImpl>\n  <scope>GLOBAL</scope>\n  <id>nexus-deploy</id>\n  <username>deploy</username>\n  <password>§</password>\n</com.cloudbees.plugins.credentials.impl.UsernamePasswordCredentialsImpl>",
    )
    # --- CLI flags / positional args / shell history
    C(
        "mysqldump_p_attached_password",
        "shell_history",
        pw_rand(14),
        "mysqldump -h mysql-primary -u backup -p§ --single-transaction --routines shop > shop_$(date +%F).sql",
    )
    C(
        "psql_pgpassword_inline_prefix",
        "shell_history",
        pw(),
        "PGPASSWORD='§' psql -h db-ledger.internal -U ledger_app -d ledger -c 'select count(*) from invoices'",
    )
    C(
        "redis_cli_a_flag",
        "shell_history",
        rs(32),
        "redis-cli -h cache-01.acme.internal -p 6380 --tls -a § --no-auth-warning info keyspace",
    )
    C(
        "sshpass_p_flag_rsync",
        "shell_history",
        pw(),
        "sshpass -p '§' rsync -avz -e ssh ./dist/ deploy@203.0.113.40:/var/www/app/",
    )
    C(
        "htpasswd_b_batch_mode",
        "shell_history",
        pw(),
        "htpasswd -bB /etc/nginx/.htpasswd grafana-viewer §",
    )
    C(
        "openssl_pkcs12_passout_pass",
        "shell_history",
        pw_rand(16),
        "openssl pkcs12 -export -in client.crt -inkey client.key -out client.p12 -passout pass:§",
    )
    C(
        "keytool_storepass_keypass",
        "shell_history",
        pw(),
        "keytool -genkeypair -alias upload -keyalg RSA -keysize 4096 -validity 10000 -keystore upload.jks -storepass § -keypass § -dname 'CN=Acme Mobile'",
    )
    C(
        "az_login_service_principal_password",
        "shell_history",
        rs(3) + "8Q~" + rs(34, ALNUM + "~._-"),
        f"az login --service-principal -u {uuid4()} -p § --tenant {uuid4()}",
    )
    C(
        "gcloud_sql_users_set_password",
        "shell_history",
        pw_rand(20),
        "gcloud sql users set-password postgres --instance=ledger-prod --password='§'",
    )
    C(
        "aws_rds_modify_master_password",
        "shell_history",
        pw_rand(24, "!#%^*-_=+"),
        "aws rds modify-db-instance --db-instance-identifier ledger-prod --master-user-password '§' --apply-immediately",
    )
    C(
        "kubectl_create_secret_generic_from_literal",
        "shell_history",
        pw(),
        "kubectl -n payments create secret generic adyen --from-literal=username=ws@Company.Acme --from-literal=password='§'",
    )
    C(
        "docker_login_p_flag_registry",
        "shell_history",
        pw_rand(20),
        "docker login registry.acme.dev -u ci-pusher -p § 2>/dev/null && docker push registry.acme.dev/web:2.3.1",
    )
    C(
        "helm_install_set_admin_password",
        "cli",
        pw(),
        "helm upgrade --install grafana grafana/grafana -n monitoring --set adminUser=admin --set adminPassword='§' --set persistence.enabled=true",
    )
    C(
        "mongorestore_password_flag",
        "shell_history",
        pw_rand(16),
        "mongorestore --uri mongodb://restore@mongo-02:27017 --authenticationDatabase admin --password=§ --drop dump/",
    )
    C(
        "smbclient_user_percent_password",
        "shell_history",
        pw(),
        "smbclient //fs01.corp.acme.dev/finance -U 'CORP\\svc-report%§' -c 'get Q3.xlsx'",
    )
    C(
        "net_use_windows_mapped_drive",
        "shell_history",
        pw(),
        "net use Z: \\\\fs01\\projects /user:CORP\\j.nowak § /persistent:yes",
    )
    C(
        "rdesktop_p_flag",
        "shell_history",
        pw(),
        "rdesktop -u Administrator -p '§' -g 1600x900 10.20.30.15",
    )
    C(
        "curl_u_user_password_jenkins_api",
        "cli",
        pw_rand(16),
        "curl -u 'release-bot:§' -X POST https://ci.acme.dev/job/ledger/job/main/buildWithParameters?DEPLOY=true",
    )
    C(
        "wget_http_password_flag",
        "shell_history",
        pw(),
        "wget --http-user=mirror --http-password=§ -r -np https://downloads.partner.example/firmware/2026-11/",
    )
    C(
        "git_push_https_userinfo_url",
        "shell_history",
        rs(40, ALNUM),
        "git push https://deploy-bot:§@git.acme.dev/ops/config.git HEAD:refs/heads/main",
    )
    C(
        "mosquitto_pub_pw_flag",
        "shell_history",
        pw(),
        "mosquitto_pub -h mqtt.acme.iot -p 8883 --cafile ca.crt -u sensor-gw -P '§' -t site/12/temp -m 21.4",
    )
    C(
        "ldapsearch_w_bind_password",
        "shell_history",
        pw(),
        "ldapsearch -H ldaps://dc01.corp.acme.dev -D 'svc-ldap@corp.acme.dev' -w '§' -b 'DC=corp,DC=acme,DC=dev' '(sAMAccountName=jnowak)'",
    )
    C(
        "vault_login_userpass_password_arg",
        "shell_history",
        pw(),
        "vault login -method=userpass username=mkowalski password='§'",
    )
    C(
        "sqlcmd_p_flag_sql_server",
        "shell_history",
        pw(),
        "sqlcmd -S sql01.corp.acme.dev -U sa -P '§' -Q \"BACKUP DATABASE crm TO DISK='D:\\bak\\crm.bak'\"",
    )
    C(
        "influx_cli_password_setup",
        "shell_history",
        pw_rand(18),
        "influx setup --username admin --password § --org acme --bucket metrics --retention 30d --force",
    )
    C(
        "7z_p_flag_archive",
        "shell_history",
        pw_rand(16),
        "7z a -t7z -mhe=on -p§ customer_export_2026-11.7z customer_export.csv",
    )
    C(
        "gpg_passphrase_flag_batch_decrypt",
        "shell_history",
        phrase(),
        "gpg --batch --pinentry-mode loopback --passphrase '§' -d backups/vault-snapshot.gpg > snapshot.snap",
    )
    C(
        "ansible_vault_password_echo_file",
        "shell_history",
        pw_rand(24),
        "echo '§' > ~/.vault_pass && chmod 600 ~/.vault_pass && ansible-playbook site.yml --vault-password-file ~/.vault_pass",
    )
    C(
        "powershell_convertto_securestring_plaintext",
        "code",
        pw(),
        "$pass = ConvertTo-SecureString '§' -AsPlainText -Force\n$cred = New-Object System.Management.Automation.PSCredential('CORP\\svc-deploy', $pass)\nInvoke-Command -ComputerName web01 -Credential $cred -ScriptBlock { iisreset }",
    )
    C(
        "cmd_runas_savecred_note",
        "shell_history",
        pw(),
        "C:\\> cmdkey /add:fileserver01 /user:CORP\\backup /pass:§\nCMDKEY: Credential added successfully.",
    )
    # --- URLs / curl / httpie
    C(
        "url_query_api_key_weather",
        "url",
        rhex(32),
        "https://api.openweathermap.org/data/3.0/onecall?lat=52.52&lon=13.40&exclude=minutely&units=metric&appid=§",
    )
    C(
        "url_query_access_token_generic_webhook",
        "url",
        rs(43, ALNUM + "-_"),
        "Webhook configured: https://hooks.acme-erp.example/inbound/shipments?access_token=§&source=shopify",
    )
    C(
        "url_userinfo_http_proxy_env",
        "env",
        pw(),
        "http_proxy=http://j.nowak:§@proxy.corp.acme.dev:3128\nhttps_proxy=http://j.nowak:§@proxy.corp.acme.dev:3128\nno_proxy=localhost,.acme.internal",
    )
    C(
        "url_userinfo_elastic_in_chat",
        "chat",
        pw_rand(20),
        "can you check if kibana works for you? I'm using https://elastic:§@logs.acme.dev:9243 and getting 502",
    )
    C(
        "curl_header_x_api_key_generic",
        "cli",
        rs(40, ALNUM),
        "curl -sS https://api.partner-logistics.example/v2/shipments/SH-99213 -H 'X-API-Key: §' | jq .status",
    )
    C(
        "curl_data_password_login_form",
        "cli",
        pw(),
        "curl -c cookies.txt -d 'username=ops&password=§' https://router.lan/cgi-bin/login",
    )
    C(
        "httpie_auth_flag",
        "cli",
        pw_rand(16),
        "http --auth admin:§ POST https://nexus.acme.internal/service/rest/v1/security/users/deploy/change-password text/plain",
    )
    C(
        "httpie_header_bearer_opaque_token",
        "cli",
        rs(48, ALNUM),
        "http GET https://crm.acme.dev/api/contacts?page=3 'Authorization: Bearer §' 'Accept: application/json'",
    )
    C(
        "curl_oauth_client_credentials_secret",
        "cli",
        rs(40, ALNUM + "-_"),
        "curl -s -X POST https://login.partner.example/oauth/token -d grant_type=client_credentials -d client_id=acme-sync -d client_secret=§ -d scope=orders.read",
    )
    C(
        "url_redis_userinfo_in_error_chat",
        "chat",
        rs(24),
        "prod is down again, worker logs: `Error: connect ECONNREFUSED redis://:§@10.0.4.7:6379` — anyone touched the security groups?",
    )
    # --- logs / stack traces
    C(
        "python_traceback_with_password_local_var",
        "log",
        pw(),
        "Traceback (most recent call last):\n  File \"/app/sync.py\", line 88, in connect\n    conn = psycopg.connect(host=host, user=user, password=password)\n    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n  locals: host='db-ledger.internal' user='ledger_app' password='§'\npsycopg.OperationalError: connection failed: FATAL:  password authentication failed for user \"ledger_app\"",
    )
    C(
        "java_exception_jdbc_url_with_password",
        "log",
        pw_rand(14),
        "org.springframework.jdbc.CannotGetJdbcConnectionException: Failed to obtain JDBC Connection\n\tat org.springframework.jdbc.datasource.DataSourceUtils.getConnection(DataSourceUtils.java:84)\nCaused by: java.sql.SQLException: Access denied for user 'billing'@'10.0.3.14' (url=jdbc:mysql://mysql-01:3306/billing?user=billing&password=§)",
    )
    C(
        "go_panic_dsn_in_message",
        "log",
        pw(),
        "panic: dial postgres://importer:§@10.0.7.21:5432/catalog?sslmode=disable: dial tcp 10.0.7.21:5432: connect: connection refused\n\ngoroutine 1 [running]:\nmain.main()\n\t/src/cmd/importer/main.go:41 +0x2c5",
    )
    C(
        "nginx_access_log_query_password",
        "log",
        pw(),
        '203.0.113.77 - - [29/Nov/2026:14:02:11 +0000] "GET /api/login?user=kiosk07&password=§ HTTP/1.1" 200 512 "-" "Mozilla/5.0 (Linux; Android 14)"',
    )
    C(
        "json_log_line_request_headers_authorization",
        "log",
        rs(40, ALNUM),
        json.dumps(
            {
                "ts": "2026-11-30T11:20:41.221Z",
                "level": "debug",
                "msg": "outgoing request",
                "method": "POST",
                "url": "https://api.partner.example/v1/orders",
                "headers": {"content-type": "application/json", "authorization": "Token §"},
            }
        ),
    )
    C(
        "k8s_event_env_dump_password",
        "log",
        pw(),
        "$ kubectl describe pod ledger-api-7d9f8c6b5-x2kq9\n    Environment:\n      DB_HOST:      db-ledger.internal\n      DB_USER:      ledger_app\n      DB_PASSWORD:  §\n    Mounts:\n      /var/run/secrets/kubernetes.io/serviceaccount from kube-api-access-8xk2c (ro)",
    )
    C(
        "docker_inspect_env_array",
        "json",
        pw_rand(20),
        json.dumps(
            [
                {
                    "Config": {
                        "Env": [
                            "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin",
                            "POSTGRES_PASSWORD=§",
                            "PGDATA=/var/lib/postgresql/data",
                        ]
                    }
                }
            ],
            indent=2,
        ),
    )
    C(
        "ps_aux_password_in_argv",
        "log",
        pw(),
        "$ ps aux | grep java\nsvc      41827  4.1 12.0 8123412 1967324 ?  Sl  09:12  3:41 java -Dspring.datasource.password=§ -jar /opt/app/app.jar",
    )
    C(
        "syslog_sudo_command_line_password",
        "log",
        pw(),
        "Nov 30 10:02:14 web03 sudo:   deploy : TTY=pts/1 ; PWD=/home/deploy ; USER=root ; COMMAND=/usr/bin/mysql -uroot -p§ -e FLUSH PRIVILEGES",
    )
    C(
        "ci_log_echo_set_x_password",
        "log",
        pw_rand(18),
        "+ export REGISTRY_PASSWORD=§\n+ docker login -u ci -p ******** registry.acme.dev\nWARNING! Using --password via the CLI is insecure. Use --password-stdin.\nLogin Succeeded",
    )
    C(
        "php_pdo_exception_message_password",
        "log",
        pw(),
        "PHP Fatal error:  Uncaught PDOException: SQLSTATE[HY000] [1045] Access denied in /var/www/html/config.php:12\nStack trace:\n#0 /var/www/html/config.php(12): PDO->__construct('mysql:host=loca...', 'shop', '§')\n#1 {main}",
    )
    C(
        "rails_log_filtered_params_miss",
        "log",
        pw(),
        'Started POST "/users/sign_in" for 198.51.100.23 at 2026-11-30 12:01:33 +0000\nProcessing by Users::SessionsController#create as HTML\n  Parameters: {"authenticity_token"=>"[FILTERED]", "user"=>{"email"=>"ceo@acme.dev", "pass"=>"§"}, "commit"=>"Log in"}',
    )
    # --- SQL
    C(
        "sql_create_user_identified_by",
        "sql",
        pw(),
        "CREATE USER 'grafana_ro'@'10.0.%' IDENTIFIED BY '§';\nGRANT SELECT ON metrics.* TO 'grafana_ro'@'10.0.%';",
    )
    C(
        "sql_alter_role_password_postgres",
        "sql",
        pw_rand(20),
        "ALTER ROLE replicator WITH REPLICATION LOGIN PASSWORD '§';",
    )
    C(
        "sql_insert_api_credentials_seed",
        "sql",
        rs(40),
        f"INSERT INTO integrations (id, provider, client_id, client_secret, created_at)\nVALUES (7, 'netsuite', '{rhex(64)}', '§', now());",
    )
    C(
        "sql_update_smtp_settings_password",
        "sql",
        pw(),
        "UPDATE settings SET value = '§' WHERE key = 'smtp.password'; -- was bouncing since rotation",
    )
    C(
        "sql_server_create_login_with_password",
        "sql",
        pw(),
        "CREATE LOGIN etl_loader WITH PASSWORD = N'§', CHECK_POLICY = OFF;\nGO",
    )
    C(
        "sql_dblink_connect_string",
        "sql",
        pw(),
        "SELECT * FROM dblink('host=legacy-db port=5432 dbname=erp user=migrator password=§', 'SELECT id, total FROM orders') AS t(id int, total numeric);",
    )
    # --- markdown / notes / commits
    C(
        "markdown_table_service_accounts",
        "markdown",
        pw_rand(16),
        "| service | user | password |\n|---|---|---|\n| jira | svc-jira | `§` |\n| confluence | svc-wiki | see 1Password |",
    )
    C(
        "readme_quickstart_real_password",
        "markdown",
        pw(),
        "## Local dev\n\n```bash\ndocker compose up -d\n# the seeded admin on the shared staging DB:\n#   admin@acme.dev / §\n```",
    )
    C(
        "commit_message_body_password_mentioned",
        "commit",
        pw(),
        "fix(smtp): use new relay credentials\n\nRelay password rotated by the provider this morning; new one is § .\nTODO: move to vault once INFRA-221 lands.",
    )
    C(
        "commit_message_trailer_api_key",
        "commit",
        rs(32),
        "chore: bump partner SDK to 4.2\n\nSigned-off-by: Ana Ruiz <ana@acme.dev>\nPartner-Api-Key: §",
    )
    C(
        "pr_comment_suggestion_with_token",
        "markdown",
        rs(40, ALNUM),
        '```suggestion\n    client = PartnerClient(base_url=URL, token="§")\n```\nthis fixed it locally for me, the env var wasn\'t being read in CI',
    )
    C(
        "session_note_agent_used_password",
        "notes",
        pw(),
        "Session 2026-11-30: logged into the staging admin with qa-admin / § to reproduce #1882; repro confirmed, fix in branch fix/1882-invoice-rounding.",
    )
    C(
        "obsidian_note_homelab_creds",
        "markdown",
        pw(),
        "# Homelab\n- proxmox: root@pam / §\n- unifi: https://192.168.1.2:8443 (same as proxmox)\n- pihole: no password",
    )
    C(
        "jira_comment_temp_creds",
        "notes",
        pw_rand(12),
        "Temporary creds for the vendor are set up: user `vendor-acme-qa`, password `§`. Account expires 2026-12-15. — Szymon",
    )
    C(
        "email_signature_block_ftp_details",
        "chat",
        pw(),
        "Dear partner,\nplease upload the monthly files to our SFTP:\nHost: sftp.acme.dev\nUser: partner_north\nPassword: §\nKind regards,\nAcme Data Team",
    )
    C(
        "cheat_sheet_text_file_admin_pins",
        "notes",
        rdig(6),
        "alarm panel installer code: §\nmaster code: ask Ahmed\ngate remote: blue button twice",
    )
    # --- code
    C(
        "python_requests_basic_auth_tuple",
        "code",
        pw(),
        'resp = requests.get(\n    "https://jira.acme.dev/rest/api/2/search",\n    params={"jql": "project = OPS"},\n    auth=("svc-jira", "§"),\n)',
    )
    C(
        "python_paramiko_connect_password",
        "code",
        pw(),
        'ssh = paramiko.SSHClient()\nssh.set_missing_host_key_policy(paramiko.AutoAddPolicy())\nssh.connect("10.0.9.14", username="pi", password="§")',
    )
    C(
        "python_smtplib_login",
        "code",
        rs(16, LOW),
        'with smtplib.SMTP_SSL("smtp.gmail.com", 465) as s:\n    s.login("reports.acme@gmail.com", "§")\n    s.send_message(msg)',
    )
    C(
        "java_properties_class_setproperty",
        "code",
        pw(),
        'Properties props = new Properties();\nprops.setProperty("user", "warehouse");\nprops.setProperty("password", "§");\nConnection conn = DriverManager.getConnection(url, props);',
    )
    C(
        "csharp_connection_string_const",
        "code",
        pw(),
        'private const string ConnStr = "Host=pg.acme.internal;Port=5432;Database=crm;Username=crm_app;Password=§;SSL Mode=Require";',
    )
    C(
        "go_struct_literal_password_field",
        "code",
        pw(),
        'cfg := mysql.Config{\n\tUser:   "inventory",\n\tPasswd: "§",\n\tNet:    "tcp",\n\tAddr:   "mysql.acme.internal:3306",\n\tDBName: "inventory",\n}',
    )
    C(
        "rust_const_api_token",
        "code",
        rs(40, ALNUM),
        'const PARTNER_TOKEN: &str = "§";\n\nlet res = client.get(URL).bearer_auth(PARTNER_TOKEN).send().await?;',
    )
    C(
        "ruby_hash_credentials_net_http",
        "code",
        pw(),
        "req = Net::HTTP::Get.new(uri)\nreq.basic_auth 'exporter', '§'\nres = Net::HTTP.start(uri.hostname, uri.port, use_ssl: true) { |http| http.request(req) }",
    )
    C(
        "php_define_db_password_wp_config",
        "code",
        pw(),
        "define( 'DB_NAME', 'wp_acme' );\ndefine( 'DB_USER', 'wp_acme' );\ndefine( 'DB_PASSWORD', '§' );\ndefine( 'DB_HOST', 'localhost' );",
    )
    C(
        "kotlin_const_val_secret",
        "code",
        rs(32, ALNUM),
        'object ApiConfig {\n    const val BASE_URL = "https://api.acme.dev/"\n    const val CLIENT_SECRET = "§"\n}',
    )
    C(
        "swift_let_api_secret",
        "code",
        rs(40, ALNUM),
        'enum Secrets {\n    static let analyticsWriteKey = "§"\n}',
    )
    C(
        "typescript_axios_auth_config",
        "code",
        pw(),
        "const client = axios.create({\n  baseURL: 'https://erp.acme.internal/api',\n  auth: { username: 'integration', password: '§' },\n});",
    )
    C(
        "bash_script_variable_password",
        "code",
        pw(),
        '#!/bin/bash\nDB_USER=backup\nDB_PASS=\'§\'\nmysqldump -u"$DB_USER" -p"$DB_PASS" --all-databases | gzip > /backup/all.sql.gz',
    )
    C(
        "terraform_resource_inline_password",
        "hcl",
        pw_rand(20),
        'resource "aws_db_instance" "ledger" {\n  identifier        = "ledger-prod"\n  engine            = "postgres"\n  instance_class    = "db.r6g.large"\n  username          = "ledger"\n  password          = "§"\n  allocated_storage = 200\n}',
    )
    C(
        "scala_config_hocon_slick_password",
        "config",
        pw(),
        'slick.dbs.default {\n  profile = "slick.jdbc.PostgresProfile$"\n  db {\n    url = "jdbc:postgresql://pg:5432/play"\n    user = "play"\n    password = "§"\n  }\n}',
    )
    C(
        "r_dbconnect_password_arg",
        "code",
        pw(),
        'con <- DBI::dbConnect(RPostgres::Postgres(), host = "warehouse.acme.internal", dbname = "bi", user = "analyst", password = "§")',
    )
    C(
        "perl_dbi_connect_password",
        "code",
        pw(),
        "my $dbh = DBI->connect('DBI:mysql:database=legacy;host=db01', 'legacy_rw', '§', { RaiseError => 1 });",
    )
    C(
        "elixir_repo_config_password",
        "code",
        pw(),
        'config :acme, Acme.Repo,\n  username: "acme",\n  password: "§",\n  hostname: "db.acme.internal",\n  database: "acme_prod",\n  pool_size: 10',
    )
    C(
        "lua_openresty_redis_auth",
        "code",
        rs(24),
        'local red = redis:new()\nred:connect("10.0.4.7", 6379)\nlocal ok, err = red:auth("§")',
    )
    C(
        "vba_macro_ado_password",
        "code",
        pw(),
        'conn.ConnectionString = "Provider=SQLOLEDB;Data Source=SQL01;Initial Catalog=Finance;User ID=excel_ro;Password=§;"\nconn.Open',
    )
    C(
        "jupyter_cell_getpass_bypassed",
        "code",
        pw(),
        '# password = getpass.getpass()\npassword = "§"\nengine = create_engine(f"postgresql://analyst:{password}@warehouse:5432/bi")',
    )
    C(
        "arduino_wifi_begin_password",
        "code",
        pw(),
        'const char* ssid = "Workshop-IoT";\nconst char* password = "§";\n\nvoid setup() {\n  WiFi.begin(ssid, password);\n}',
    )
    C(
        "cpp_curl_setopt_userpwd",
        "code",
        pw(),
        'curl_easy_setopt(curl, CURLOPT_USERPWD, "uploader:§");\ncurl_easy_setopt(curl, CURLOPT_URL, "ftp://ftp.acme.dev/incoming/");',
    )

    # --- more commit messages / markdown / URLs / k8s
    C(
        "commit_subject_password_change_inline",
        "commit",
        pw(),
        "ops: set kiosk admin password to § for the trade fair weekend",
    )
    C(
        "commit_trailer_temp_credentials",
        "commit",
        pw_rand(16),
        "test(e2e): run checkout suite against staging\n\nStaging-User: e2e-runner\nStaging-Password: §\nSigned-off-by: Ines Duarte <ines@acme.dev>",
    )
    C(
        "commit_body_german_db_password",
        "commit",
        pw(),
        "fix(db): neues Passwort für den Reporting-User\n\nDas alte Passwort wurde vom DBA zurückgesetzt, das neue lautet § .\nWird mit INFRA-412 nach Vault verschoben.",
    )
    C(
        "squash_merge_body_includes_env_diff",
        "commit",
        rhex(64),
        "Merge branch 'feat/webhooks' (#412)\n\n* feat(webhooks): verify signatures\n* chore: add local env for testing\n  +WEBHOOK_SIGNING_SECRET=§\n* docs: webhook setup",
    )
    C(
        "markdown_onboarding_checklist_wifi",
        "markdown",
        pw(),
        "## Day 1 checklist\n- [ ] collect laptop from IT (room 2.14)\n- [ ] Wi-Fi: `ACME-Staff`, password `§`\n- [ ] enable 2FA on Google Workspace",
    )
    C(
        "markdown_details_block_env_dump",
        "markdown",
        rs(40, ALNUM),
        "<details><summary>env</summary>\n\n```\nNODE_ENV=production\nPARTNER_API_TOKEN=§\nLOG_LEVEL=debug\n```\n</details>",
    )
    C(
        "markdown_mkdocs_admonition_credentials",
        "markdown",
        pw(),
        '!!! warning "Demo environment"\n    Log in to https://demo.acme.dev with `sales-demo` / `§`. The account is shared by the whole sales team.',
    )
    C(
        "url_basic_auth_grafana_render_link",
        "url",
        pw(),
        "Dashboard screenshot for the postmortem: https://viewer:§@grafana.acme.dev/render/d-solo/ledger-api?panelId=4&width=1000&height=500",
    )
    C(
        "url_query_sig_private_calendar_feed",
        "url",
        rhex(32),
        "Add the on-call rota to your calendar: https://acme.pagerduty.com/private/§/feed/P"
        + rs(6, UP + DIG),
    )
    C(
        "k8s_configmap_misused_for_password",
        "k8s",
        pw(),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: reporting-config\ndata:\n  REPORTING_DB_HOST: pg-reporting.internal\n  REPORTING_DB_USER: reporting\n  REPORTING_DB_PASSWORD: §",
    )
    C(
        "k8s_cronjob_args_password_flag",
        "k8s",
        pw(),
        '          containers:\n            - name: backup\n              image: acme/pg-backup:1.4\n              args: ["--host=pg-ledger", "--user=backup", "--password=§", "--bucket=s3://acme-backups/pg"]',
    )
    C(
        "k8s_ingress_basic_auth_annotation_comment",
        "k8s",
        pw(),
        "  annotations:\n    nginx.ingress.kubernetes.io/auth-type: basic\n    nginx.ingress.kubernetes.io/auth-secret: docs-basic-auth\n    # creds for reviewers: reviewer / §",
    )
    C(
        "jenkinsfile_withenv_password",
        "code",
        pw(),
        "stage('Migrate') {\n  steps {\n    withEnv(['FLYWAY_USER=migrator', 'FLYWAY_PASSWORD=§']) {\n      sh './gradlew flywayMigrate'\n    }\n  }\n}",
    )
    C(
        "makefile_variable_password",
        "code",
        pw(),
        "DB_URL ?= postgres://app:§@localhost:5433/app_test\n\ntest-integration:\n\tDATABASE_URL=$(DB_URL) go test -tags=integration ./...",
    )
    C(
        "justfile_recipe_token",
        "code",
        rs(32, LOW + DIG),
        "set dotenv-load\n\ndeploy:\n    curl -fsS -X POST https://deploy.acme.internal/hooks/ledger -H 'X-Deploy-Token: §'",
    )


# ---------------------------------------------------------------- benign
def sha1():
    return rhex(40)


def benign():
    # --- git SHAs and commit trailers
    B(
        "git_sha_revert_message",
        "commit",
        f'Revert "ledger: batch invoice writes"\n\nThis reverts commit {sha1()}.\nThe batching broke idempotency keys under retry.',
    )
    B(
        "git_sha_cherry_pick_trailer",
        "commit",
        f"fix(api): clamp page size to 200\n\n(cherry picked from commit {sha1()})",
    )
    B(
        "git_short_shas_log_oneline",
        "shell_history",
        "\n".join(
            f"{rhex(7)} {m}"
            for m in [
                "docs: fix typo in README",
                "ci: cache pnpm store",
                "feat(auth): add WebAuthn login",
                "chore(deps): bump vite to 6.0.3",
            ]
        ),
    )
    B(
        "git_bisect_bad_sha",
        "shell_history",
        f"git bisect start\ngit bisect bad HEAD\ngit bisect good {rhex(12)}\nBisecting: 37 revisions left to test after this (roughly 5 steps)\n[{sha1()}] perf: memoize tax table lookup",
    )
    B(
        "git_merge_commit_header",
        "log",
        f"commit {sha1()}\nMerge: {rhex(9)} {rhex(9)}\nAuthor: Hana Sato <hana@acme.dev>\nDate:   Mon Nov 24 16:02:11 2026 +0900\n\n    Merge pull request #4410 from acme/feat/export-csv",
    )
    B(
        "git_fixes_trailer_sha",
        "commit",
        f'ledger: recompute totals after currency change\n\nFixes: {rhex(12)} ("ledger: cache totals per invoice")\nReported-by: Omar Haddad <omar@acme.dev>\nSigned-off-by: Lea Fischer <lea@acme.dev>',
    )
    B(
        "gerrit_change_id_and_reviewed",
        "commit",
        f"build: drop python 3.9\n\nChange-Id: I{rhex(40)}\nReviewed-on: https://review.acme.dev/c/platform/+/{rdig(5)}\nTested-by: CI Bot <ci@acme.dev>",
    )
    B(
        "co_authored_by_trailer",
        "commit",
        "feat(search): typo-tolerant matching\n\nCo-authored-by: Mateus Lima <mateus.lima@acme.dev>\nCo-authored-by: dependabot[bot] <49699333+dependabot[bot]@users.noreply.github.com>",
    )
    B(
        "git_range_diff_compare_url",
        "url",
        f"Full changelog: https://github.com/acme/ledger/compare/{rhex(12)}...{rhex(12)}",
    )
    B(
        "github_actions_pinned_by_sha",
        "yaml",
        f"    steps:\n      - uses: actions/checkout@{sha1()} # v4.2.2\n      - uses: pnpm/action-setup@{sha1()} # v4.1.0\n      - uses: actions/setup-node@{sha1()} # v4.4.0",
    )
    B(
        "git_submodule_status",
        "shell_history",
        f"$ git submodule status\n {sha1()} vendor/protos (v1.8.0)\n+{sha1()} vendor/ui-kit (heads/main)",
    )
    B(
        "git_reflog_entries",
        "shell_history",
        "\n".join(
            f"{rhex(7)} HEAD@{{{i}}}: {m}"
            for i, m in enumerate(
                [
                    "commit: tidy imports",
                    "rebase (finish): returning to refs/heads/feat/csv",
                    "checkout: moving from main to feat/csv",
                ]
            )
        ),
    )
    B(
        "git_stash_list",
        "shell_history",
        f"stash@{{0}}: WIP on main: {rhex(7)} ci: split lint job\nstash@{{1}}: On feat/csv: half-done exporter",
    )
    B(
        "git_verify_commit_gpg_output",
        "log",
        f'gpg: Signature made Tue 25 Nov 2026 10:14:03 CET\ngpg:                using EDDSA key {rHEX(40)}\ngpg: Good signature from "Lea Fischer <lea@acme.dev>" [ultimate]',
    )
    B(
        "git_lfs_pointer",
        "config",
        f"version https://git-lfs.github.com/spec/v1\noid sha256:{rhex(64)}\nsize {rdig(8)}",
    )
    B(
        "svn_revision_and_git_svn_id",
        "commit",
        f"Import legacy reporting module\n\ngit-svn-id: https://svn.acme.dev/repos/reporting/trunk@{rdig(5)} {uuid4()}",
    )
    # --- UUIDs / ids
    B(
        "uuid_request_id_log",
        "log",
        f"2026-11-30T10:11:12.004Z INFO request completed request_id={uuid4()} method=GET path=/api/v2/invoices status=200 duration_ms=41",
    )
    B(
        "uuid_primary_key_sql",
        "sql",
        f"UPDATE invoices SET status = 'void' WHERE id = '{uuid4()}' AND tenant_id = '{uuid4()}';",
    )
    B(
        "uuid_azure_subscription_tenant_ids",
        "cli",
        f"az account set --subscription {uuid4()}\naz aks get-credentials -g rg-prod-weu -n aks-prod-weu\n# tenant {uuid4()}",
    )
    B(
        "uuid_terraform_state_lineage",
        "json",
        json.dumps(
            {
                "version": 4,
                "terraform_version": "1.9.8",
                "serial": 212,
                "lineage": uuid4(),
                "outputs": {},
            },
            indent=2,
        ),
    )
    B(
        "uuid_vscode_launch_json",
        "json",
        json.dumps(
            {
                "version": "0.2.0",
                "configurations": [
                    {
                        "type": "node",
                        "request": "launch",
                        "name": "api",
                        "program": "${workspaceFolder}/src/index.ts",
                    }
                ],
            },
            indent=2,
        ),
    )
    B(
        "uuid_k8s_pod_uid",
        "k8s",
        f'metadata:\n  name: ledger-api-7d9f8c6b5-x2kq9\n  namespace: ledger\n  uid: {uuid4()}\n  resourceVersion: "{rdig(8)}"\n  ownerReferences:\n  - kind: ReplicaSet\n    name: ledger-api-7d9f8c6b5\n    uid: {uuid4()}',
    )
    B(
        "uuid_jira_issue_comment",
        "chat",
        f"Looks like tenant {uuid4()} still has the old plan cached, I'll flush it after lunch.",
    )
    B(
        "uuid_windows_guid_registry",
        "config",
        f'[HKEY_CLASSES_ROOT\\CLSID\\{{{uuid4().upper()}}}\\InprocServer32]\n@="C:\\\\Program Files\\\\Acme\\\\shellext.dll"\n"ThreadingModel"="Apartment"',
    )
    B(
        "uuid_xcode_project_ids",
        "config",
        f"\t\t{rHEX(24)} /* AppDelegate.swift in Sources */ = {{isa = PBXBuildFile; fileRef = {rHEX(24)} /* AppDelegate.swift */; }};",
    )
    B(
        "uuid_grafana_dashboard_uid",
        "json",
        json.dumps(
            {
                "dashboard": {
                    "uid": rs(14, LOW + DIG),
                    "title": "Ledger API",
                    "panels": [{"datasource": {"type": "prometheus", "uid": rs(9, LOW + DIG)}}],
                }
            }
        ),
    )
    B(
        "ulid_event_ids",
        "log",
        "\n".join(
            f"evt {'01J' + rs(23, '0123456789ABCDEFGHJKMNPQRSTVWXYZ')} invoice.created"
            for _ in range(3)
        ),
    )
    B(
        "stripe_object_ids_not_keys",
        "log",
        f"webhook received: evt_{rs(24)} type=payment_intent.succeeded pi=pi_{rs(24)} customer=cus_{rs(14)} charge=ch_{rs(24)}",
    )
    B(
        "twilio_account_sid_docs_snippet",
        "chat",
        f"the messages all show up under account AC{rhex(32)} in the console, so the subaccount setup worked",
    )
    B(
        "slack_channel_and_user_ids",
        "json",
        json.dumps(
            {
                "channel": "C" + rs(10, UP + DIG),
                "user": "U" + rs(10, UP + DIG),
                "ts": f"{rdig(10)}.{rdig(6)}",
                "team": "T" + rs(10, UP + DIG),
                "text": "deploy done",
            }
        ),
    )
    B(
        "aws_arns_and_account_id",
        "json",
        json.dumps(
            {
                "RoleArn": f"arn:aws:iam::{rdig(12)}:role/github-oidc-deploy",
                "SecretArn": f"arn:aws:secretsmanager:eu-west-1:{rdig(12)}:secret:prod/ledger/db-{rs(6)}",
            },
            indent=2,
        ),
    )
    B(
        "aws_request_id_cli_error",
        "log",
        f"An error occurred (AccessDenied) when calling the PutObject operation: Access Denied\nRequestId: {rHEX(16)}\nHostId: {rs(76, ALNUM + '+/')}=",
    )
    B(
        "k8s_replicaset_hash_names",
        "log",
        "NAME                          READY   STATUS    RESTARTS   AGE\n"
        + "\n".join(
            f"web-{rs(10, LOW + DIG)}-{rs(5, LOW + DIG)}   1/1     Running   0          3h"
            for _ in range(3)
        ),
    )
    B(
        "docker_container_ids_ps",
        "log",
        "CONTAINER ID   IMAGE              STATUS\n"
        + "\n".join(
            f"{rhex(12)}   {img}   Up 2 hours"
            for img in ["postgres:17", "redis:7.4", "acme/api:2.14"]
        ),
    )
    B(
        "snowflake_discord_ids",
        "chat",
        f"message link: https://discord.com/channels/{rdig(18)}/{rdig(19)}/{rdig(19)}",
    )
    B(
        "google_oauth_client_id_public",
        "json",
        json.dumps(
            {
                "web": {
                    "client_id": f"{rdig(12)}-{rs(32, LOW + DIG)}.apps.googleusercontent.com",
                    "project_id": "acme-login",
                    "auth_uri": "https://accounts.google.com/o/oauth2/auth",
                }
            }
        ),
    )
    B(
        "opentelemetry_traceparent_header",
        "log",
        f"traceparent: 00-{rhex(32)}-{rhex(16)}-01\ntracestate: acme=t61rcWkgMzE",
    )
    B(
        "youtube_and_drive_ids_in_doc",
        "markdown",
        f"Demo recording: https://www.youtube.com/watch?v={rs(11, ALNUM + '-_')}\nSlides: https://docs.google.com/presentation/d/{rs(44, ALNUM + '-_')}/edit",
    )
    B(
        "apple_team_and_bundle_id",
        "config",
        f'DEVELOPMENT_TEAM = {rs(10, UP + DIG)};\nPRODUCT_BUNDLE_IDENTIFIER = dev.acme.field;\nPROVISIONING_PROFILE_SPECIFIER = "match AppStore dev.acme.field";',
    )
    # --- hashes / digests / integrity
    B(
        "docker_image_digest_pin",
        "dockerfile",
        f"FROM python:3.12-slim@sha256:{rhex(64)}\nRUN pip install --no-cache-dir uv",
    )
    B(
        "k8s_image_digest",
        "k8s",
        f"      containers:\n        - name: api\n          image: ghcr.io/acme/ledger-api@sha256:{rhex(64)}",
    )
    B(
        "npm_lock_integrity_sha512",
        "json",
        json.dumps(
            {
                "node_modules/lodash": {
                    "version": "4.17.21",
                    "resolved": "https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz",
                    "integrity": "sha512-" + b64(rbytes(64)),
                }
            },
            indent=2,
        ),
    )
    B(
        "go_sum_lines",
        "config",
        f"github.com/google/uuid v1.6.0 h1:{b64(rbytes(32))}\ngithub.com/google/uuid v1.6.0/go.mod h1:{b64(rbytes(32))}",
    )
    B(
        "pip_requirements_hashes",
        "config",
        f"requests==2.32.3 \\\n    --hash=sha256:{rhex(64)} \\\n    --hash=sha256:{rhex(64)}",
    )
    B(
        "cargo_lock_checksum",
        "toml",
        f'[[package]]\nname = "serde"\nversion = "1.0.215"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\nchecksum = "{rhex(64)}"',
    )
    B(
        "sri_script_integrity_html",
        "code",
        f'<script src="https://cdn.jsdelivr.net/npm/alpinejs@3.14.3/dist/cdn.min.js" integrity="sha384-{b64(rbytes(48))}" crossorigin="anonymous" defer></script>',
    )
    B(
        "sha256sum_release_checksums",
        "shell_history",
        "\n".join(
            f"{rhex(64)}  acme-cli_2.4.0_{a}.tar.gz"
            for a in ["linux_amd64", "linux_arm64", "darwin_arm64"]
        ),
    )
    B(
        "bazel_http_archive_sha256",
        "code",
        f'http_archive(\n    name = "rules_go",\n    sha256 = "{rhex(64)}",\n    urls = ["https://github.com/bazel-contrib/rules_go/releases/download/v0.50.1/rules_go-v0.50.1.zip"],\n)',
    )
    B(
        "homebrew_formula_sha256",
        "code",
        f'class AcmeCli < Formula\n  desc "Acme command-line tools"\n  url "https://github.com/acme/cli/archive/refs/tags/v2.4.0.tar.gz"\n  sha256 "{rhex(64)}"\n  license "MIT"\nend',
    )
    B(
        "nix_fetchurl_hash_sri",
        "code",
        f'src = fetchFromGitHub {{\n  owner = "acme";\n  repo = "cli";\n  rev = "v2.4.0";\n  hash = "sha256-{b64(rbytes(32))}";\n}};',
    )
    B(
        "etag_response_header",
        "log",
        f'HTTP/2 200\ncontent-type: application/json\netag: W/"{rhex(32)}"\ncache-control: max-age=60',
    )
    B(
        "md5_checksum_file_upload_log",
        "log",
        f"uploaded backups/2026-11-30.tar.zst (2.1 GiB) md5={rhex(32)} in 41.2s",
    )
    B(
        "ipfs_cid_in_readme",
        "markdown",
        f"The dataset snapshot is pinned at `ipfs://bafybei{rs(52, 'abcdefghijklmnopqrstuvwxyz234567')}`.",
    )
    B(
        "helm_chart_lock_digest",
        "yaml",
        f'dependencies:\n- name: postgresql\n  repository: oci://registry-1.docker.io/bitnamicharts\n  version: 16.2.1\ndigest: sha256:{rhex(64)}\ngenerated: "2026-11-20T09:12:44.127Z"',
    )
    B(
        "content_addressed_cache_key_ci",
        "log",
        f"Cache restored from key: node-cache-Linux-x64-pnpm-{rhex(64)}",
    )
    B(
        "webpack_chunk_hashes",
        "log",
        "\n".join(
            f"dist/assets/{n}-{rs(8, ALNUM + '_-')}.js   {R.randint(10, 400)}.{R.randint(10, 99)} kB"
            for n in ["index", "vendor", "charts"]
        ),
    )
    B(
        "bcrypt_cost_doc_example_hash_label",
        "markdown",
        "Passwords are stored as bcrypt with cost 12, e.g. `$2b$12$` + 53 chars. Never log the plaintext; the hash column is `users.password_digest`.",
    )
    B(
        "sha1_cert_fingerprint_android",
        "cli",
        f"$ keytool -list -v -keystore debug.keystore -alias androiddebugkey -storepass android\nCertificate fingerprints:\n\t SHA1: {':'.join(rHEX(2) for _ in range(20))}\n\t SHA256: {':'.join(rHEX(2) for _ in range(32))}",
    )
    # --- public keys / public identifiers
    B(
        "ssh_authorized_keys_ed25519",
        "config",
        f"{ssh_pub_ed25519()} lea@laptop\n{ssh_pub_ed25519()} ci@runner-03",
    )
    B(
        "ssh_known_hosts_line",
        "config",
        f"github.com {ssh_pub_ed25519()}\ngit.acme.dev,10.0.0.12 ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBB{b64(rbytes(64))}",
    )
    B(
        "ssh_host_fingerprint_prompt",
        "log",
        f"The authenticity of host 'bastion.acme.dev (203.0.113.9)' can't be established.\nED25519 key fingerprint is SHA256:{b64(rbytes(32)).rstrip('=')}.\nAre you sure you want to continue connecting (yes/no/[fingerprint])?",
    )
    B(
        "age_public_recipient_sops_yaml",
        "yaml",
        f"creation_rules:\n  - path_regex: secrets/prod/.*\\.yaml$\n    age: {bech32('age', rbytes(32))},{bech32('age', rbytes(32))}",
    )
    B(
        "pgp_public_key_block",
        "config",
        pgp_armor("PUBLIC KEY BLOCK", b"\x98\x33\x04" + rbytes(300)),
    )
    B("pem_certificate_chain", "config", pem("CERTIFICATE", bytes.fromhex("308203") + rbytes(700)))
    B(
        "pem_public_key_jwt_verify",
        "code",
        'JWT_PUBLIC_KEY = """'
        + pem(
            "PUBLIC KEY",
            bytes.fromhex("30820122300d06092a864886f70d01010105000382010f003082010a0282010100")
            + rbytes(262),
        )
        + '"""',
    )
    B(
        "jwks_public_json",
        "json",
        json.dumps(
            {
                "keys": [
                    {
                        "kty": "RSA",
                        "use": "sig",
                        "kid": rs(16, LOW + DIG),
                        "alg": "RS256",
                        "n": b64u(rbytes(256)),
                        "e": "AQAB",
                    }
                ]
            },
            indent=1,
        ),
    )
    B(
        "wireguard_peer_public_key_only",
        "ini",
        f"[Peer]\n# laptop-lea\nPublicKey = {b64(rbytes(32))}\nAllowedIPs = 10.8.0.7/32",
    )
    B(
        "stripe_publishable_key_frontend",
        "code",
        f"const stripe = Stripe('pk_live_51{rs(96)}');\nconst elements = stripe.elements({{ clientSecret }});",
    )
    B(
        "mapbox_public_token_map_init",
        "code",
        "mapboxgl.accessToken = 'pk."
        + b64u(
            json.dumps(
                {"u": "acme-maps", "a": "cl" + rs(23, LOW + DIG)}, separators=(",", ":")
            ).encode()
        )
        + "."
        + rs(22, ALNUM + "-_")
        + "';\nconst map = new mapboxgl.Map({ container: 'map', style: 'mapbox://styles/mapbox/streets-v12' });",
    )
    B(
        "posthog_project_key_snippet",
        "code",
        f"posthog.init('phc_{rs(43)}', {{ api_host: 'https://eu.i.posthog.com', person_profiles: 'identified_only' }})",
    )
    B(
        "recaptcha_site_key_html",
        "code",
        f'<div class="g-recaptcha" data-sitekey="6L{rs(38, ALNUM + "-_")}"></div>',
    )
    B(
        "google_analytics_measurement_id",
        "code",
        '<script async src="https://www.googletagmanager.com/gtag/js?id=G-'
        + rs(10, UP + DIG)
        + '"></script>',
    )
    B(
        "bitcoin_address_donations",
        "markdown",
        f"## Support\nBTC: `bc1q{rs(38, _BECH)}`\nETH: `0x{rhex(40)}`",
    )
    B(
        "ethereum_tx_hash_explorer",
        "chat",
        f"bridge tx went through: https://etherscan.io/tx/0x{rhex(64)} (block {rdig(8)})",
    )
    B("solana_public_address", "config", f'[programs.mainnet]\nacme_vault = "{b58enc(rbytes(32))}"')
    B(
        "nostr_npub_profile",
        "markdown",
        f"Follow release notes on nostr: `{bech32('npub', rbytes(32))}`",
    )
    B(
        "gpg_key_fingerprint_keys_openpgp",
        "markdown",
        f"Releases are signed with `{' '.join(rHEX(4) for _ in range(10))}` (keys.openpgp.org).",
    )
    B(
        "minisign_public_key_verify",
        "shell_history",
        f"minisign -Vm acme-cli_2.4.0_linux_amd64.tar.gz -P RW{b64(rbytes(40))[:54]}",
    )
    B(
        "sentry_dsn_public_key_browser",
        "code",
        f"Sentry.init({{\n  dsn: 'https://{rhex(32)}@o{rdig(6)}.ingest.de.sentry.io/{rdig(7)}',\n  tracesSampleRate: 0.1,\n}});",
    )
    B(
        "firebase_web_config_project_ids",
        "code",
        f"const firebaseConfig = {{\n  authDomain: 'acme-field.firebaseapp.com',\n  projectId: 'acme-field',\n  storageBucket: 'acme-field.appspot.com',\n  messagingSenderId: '{rdig(12)}',\n  appId: '1:{rdig(12)}:web:{rhex(22)}',\n}};",
    )
    B(
        "oidc_discovery_public_metadata",
        "json",
        json.dumps(
            {
                "issuer": "https://sso.acme.dev/realms/main",
                "jwks_uri": "https://sso.acme.dev/realms/main/protocol/openid-connect/certs",
                "token_endpoint": "https://sso.acme.dev/realms/main/protocol/openid-connect/token",
            },
            indent=2,
        ),
    )
    B(
        "pkce_code_challenge_url",
        "url",
        f"https://sso.acme.dev/authorize?response_type=code&client_id=cli&redirect_uri=http%3A%2F%2F127.0.0.1%3A8765%2Fcb&code_challenge={b64u(rbytes(32))}&code_challenge_method=S256&state=af0ifjsldkj",
    )
    # --- placeholders in docs / templates
    B(
        "placeholder_angle_brackets_readme",
        "markdown",
        "```bash\nexport OPENAI_API_KEY=<your-api-key>\npython -m acme_rag.ingest ./docs\n```",
    )
    B(
        "placeholder_your_token_here_env_example",
        "env",
        "# .env.example — copy to .env and fill in\nSLACK_BOT_TOKEN=your-bot-token-here\nSLACK_SIGNING_SECRET=your-signing-secret\nDATABASE_URL=postgres://user:password@localhost:5432/app",
    )
    B(
        "placeholder_xxxx_curl_docs",
        "markdown",
        'Call the API with your key:\n\n    curl -H "Authorization: Bearer xxxxxxxxxxxxxxxxxxxx" https://api.acme.dev/v1/me',
    )
    B(
        "placeholder_changeme_with_instruction",
        "yaml",
        "# Replace every `changeme` below before deploying; the chart refuses to start otherwise.\nauth:\n  adminPassword: changeme\n  replicationPassword: changeme",
    )
    B(
        "placeholder_sk_dots_docs",
        "markdown",
        "Keys look like `sk-proj-...` (project) or `sk-svcacct-...` (service account). Paste yours into Settings → Providers.",
    )
    B(
        "placeholder_ghp_format_doc",
        "markdown",
        "| prefix | token type |\n|---|---|\n| `ghp_` | classic personal access token |\n| `github_pat_` | fine-grained PAT |\n| `ghs_` | GitHub Actions / app installation |",
    )
    B(
        "placeholder_env_template_empty_values",
        "env",
        "STRIPE_SECRET_KEY=\nSTRIPE_WEBHOOK_SECRET=\nSENTRY_DSN=\nREDIS_URL=redis://localhost:6379/0",
    )
    B(
        "placeholder_todo_fill_in_yaml",
        "yaml",
        "smtp:\n  host: smtp.example.com\n  username: TODO\n  password: TODO  # ask #infra for the relay credentials",
    )
    B(
        "placeholder_uppercase_your_key",
        "code",
        'client = Anthropic(api_key="YOUR_ANTHROPIC_API_KEY")  # or set ANTHROPIC_API_KEY',
    )
    B(
        "placeholder_example_com_userinfo_docs",
        "markdown",
        "Connection strings use the usual form: `postgresql://USER:PASSWORD@HOST:5432/DBNAME`.",
    )
    B(
        "placeholder_redacted_marker_log",
        "log",
        "2026-11-30 10:01:02 INFO connecting to postgres://ledger_app:[REDACTED]@db-ledger.internal:5432/ledger",
    )
    B(
        "placeholder_docker_run_docs_dollar_braces",
        "markdown",
        "```\ndocker run -e POSTGRES_PASSWORD=<choose-a-password> -p 5432:5432 postgres:17\n```",
    )
    B(
        "placeholder_tfvars_example_file",
        "hcl",
        '# terraform.tfvars.example\ndb_password      = "REPLACE_ME"\ncloudflare_token = "REPLACE_ME"',
    )
    B(
        "placeholder_k8s_secret_template_values",
        "k8s",
        'apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\nstringData:\n  API_KEY: "{{ .Values.apiKey }}"\n  DB_PASSWORD: "{{ required \\"db password\\" .Values.db.password }}"',
    )
    B(
        "placeholder_japanese_docs",
        "markdown",
        "`API_KEY` には管理画面で発行したキーを設定してください（例: `API_KEY=<発行したキー>`）。",
    )
    B(
        "placeholder_german_docs",
        "markdown",
        "Trage in der `.env` dein eigenes Passwort ein: `DB_PASSWORD=<dein-passwort>` – das Beispiel `geheim` bitte nicht übernehmen.",
    )
    B(
        "placeholder_spanish_docs",
        "markdown",
        "Sustituye `TU_TOKEN` por el token que te dio el administrador: `curl -H 'Authorization: Bearer TU_TOKEN' ...`",
    )
    B(
        "placeholder_french_docs",
        "markdown",
        "Remplacez `<mot-de-passe>` par le vôtre dans `config.ini` (ligne `password = <mot-de-passe>`).",
    )
    B(
        "placeholder_asterisks_cli_prompt",
        "shell_history",
        "$ acme login\nEmail: lea@acme.dev\nPassword: ************\nLogged in as lea@acme.dev (org: acme)",
    )
    # --- masked values
    B(
        "masked_openai_key_settings_ui",
        "chat",
        "in the dashboard it shows `sk-proj-****************************Qm4A` so at least we know which key the worker is using",
    )
    B(
        "masked_gh_token_gh_auth_status",
        "log",
        "github.com\n  ✓ Logged in to github.com account lfischer (keyring)\n  - Active account: true\n  - Git operations protocol: ssh\n  - Token: gho_************************************\n  - Token scopes: 'gist', 'read:org', 'repo'",
    )
    B(
        "masked_aws_configure_list",
        "log",
        "      Name                    Value             Type    Location\n      ----                    -----             ----    --------\n   profile                     prod           manual    --profile\naccess_key     ****************"
        + rs(4, UP + DIG)
        + " shared-credentials-file\nsecret_key     ****************"
        + rs(4, ALNUM)
        + " shared-credentials-file\n    region                eu-west-1      config-file    ~/.aws/config",
    )
    B(
        "masked_ci_log_stars",
        "log",
        '$ docker login -u ci -p *** registry.acme.dev\nLogin Succeeded\n$ echo "token=***"\ntoken=***',
    )
    B(
        "masked_card_number_receipt",
        "chat",
        "charged to Visa •••• 4242, receipt #1847-2291 sent to billing@acme.dev",
    )
    B(
        "masked_stripe_dashboard_last4",
        "notes",
        "rotated the restricted key; old one (rk_live_...7xQa) revoked at 14:05, new one is in Vault under kv/payments/stripe",
    )
    B(
        "masked_connection_string_ui",
        "log",
        "Data source: Server=sql01;Database=crm;User Id=crm_app;Password=********;",
    )
    B(
        "masked_vercel_env_ls",
        "log",
        " name                     value               environments        created\n DATABASE_URL             Encrypted           Production          3d ago\n NEXTAUTH_SECRET          Encrypted           Production, Preview 3d ago",
    )
    B(
        "masked_k8s_describe_secret",
        "log",
        "Name:         ledger-db\nNamespace:    ledger\nType:  Opaque\n\nData\n====\nDB_PASSWORD:  24 bytes\nDB_USER:      6 bytes",
    )
    # --- env var references / secret references
    B(
        "env_ref_compose_interpolation",
        "compose",
        "services:\n  db:\n    image: postgres:17\n    environment:\n      POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:?set it in .env}\n      POSTGRES_USER: ${POSTGRES_USER:-app}",
    )
    B(
        "env_ref_github_secrets_expression",
        "yaml",
        "      - run: npm publish --provenance --access public\n        env:\n          NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }}",
    )
    B(
        "env_ref_gitlab_masked_variable_use",
        "yaml",
        'deploy:\n  script:\n    - echo "$CI_REGISTRY_PASSWORD" | docker login -u "$CI_REGISTRY_USER" --password-stdin "$CI_REGISTRY"',
    )
    B(
        "env_ref_k8s_secret_key_ref",
        "k8s",
        "        env:\n          - name: DB_PASSWORD\n            valueFrom:\n              secretKeyRef:\n                name: ledger-db\n                key: DB_PASSWORD",
    )
    B(
        "env_ref_onepassword_op_uri",
        "env",
        "DATABASE_PASSWORD=op://Engineering/ledger-prod-db/password\nSTRIPE_SECRET_KEY=op://Engineering/stripe/restricted-key",
    )
    B(
        "env_ref_vault_agent_template",
        "hcl",
        'template {\n  contents = "{{ with secret \\"kv/data/ledger\\" }}DB_PASSWORD={{ .Data.data.password }}{{ end }}"\n  destination = "/run/secrets/ledger.env"\n}',
    )
    B(
        "env_ref_terraform_var_sensitive",
        "hcl",
        'variable "db_password" {\n  type      = string\n  sensitive = true\n}\n\nresource "aws_db_instance" "ledger" {\n  password = var.db_password\n}',
    )
    B(
        "env_ref_python_os_environ",
        "code",
        'password = os.environ["SMTP_PASSWORD"]\ntoken = os.getenv("SLACK_BOT_TOKEN", "")',
    )
    B(
        "env_ref_spring_placeholder",
        "config",
        "spring.datasource.url=jdbc:postgresql://${DB_HOST:localhost}:5432/ledger\nspring.datasource.password=${DB_PASSWORD}",
    )
    B(
        "env_ref_aws_secretsmanager_cli_fetch",
        "shell_history",
        "export DB_PASSWORD=$(aws secretsmanager get-secret-value --secret-id prod/ledger/db --query SecretString --output text | jq -r .password)",
    )
    B(
        "env_ref_azure_keyvault_reference",
        "json",
        json.dumps(
            {
                "name": "ConnectionStrings__Default",
                "value": "@Microsoft.KeyVault(SecretUri=https://kv-acme-prod.vault.azure.net/secrets/crm-db/)",
                "slotSetting": False,
            }
        ),
    )
    B(
        "env_ref_sops_encrypted_value",
        "yaml",
        f"db:\n    password: ENC[AES256_GCM,data:{b64(rbytes(18))},iv:{b64(rbytes(32))},tag:{b64(rbytes(16))},type:str]\nsops:\n    age:\n        - recipient: {bech32('age', rbytes(32))}",
    )
    B(
        "env_ref_ansible_vault_lookup",
        "yaml",
        "keycloak_admin_password: \"{{ vault_keycloak_admin_password }}\"\nsmtp_password: \"{{ lookup('community.hashi_vault.hashi_vault', 'secret=kv/data/smtp:password') }}\"",
    )
    B(
        "env_ref_sealed_secret_ciphertext",
        "k8s",
        f"apiVersion: bitnami.com/v1alpha1\nkind: SealedSecret\nmetadata:\n  name: ledger-db\nspec:\n  encryptedData:\n    DB_PASSWORD: Ag{b64(rbytes(300))}",
    )
    B(
        "env_ref_ansible_vault_encrypted_block",
        "yaml",
        "db_password: !vault |\n          $ANSIBLE_VAULT;1.1;AES256\n          "
        + "\n          ".join(rhex(80) for _ in range(4)),
    )
    B(
        "env_ref_powershell_get_secret",
        "code",
        "$cred = Get-Secret -Name 'svc-deploy' -Vault AcmeVault\nInvoke-Command -ComputerName web01 -Credential $cred -ScriptBlock { iisreset }",
    )
    B(
        "env_ref_dockerfile_secret_mount",
        "dockerfile",
        "# syntax=docker/dockerfile:1.7\nFROM node:22\nRUN --mount=type=secret,id=npm_token,env=NPM_TOKEN npm ci",
    )
    B(
        "env_ref_circleci_context_usage",
        "yaml",
        "workflows:\n  deploy:\n    jobs:\n      - deploy-prod:\n          context: [aws-prod, slack-notify]",
    )
    B(
        "env_ref_systemd_credential",
        "ini",
        "[Service]\nLoadCredential=db-password:/etc/credstore/ledger-db\nEnvironment=DB_PASSWORD_FILE=%d/db-password",
    )
    B(
        "env_ref_chat_where_is_the_password",
        "chat",
        "the staging DB password is in 1Password under *Engineering → ledger-staging*, don't paste it here pls 🙏",
    )
    B(
        "env_ref_pgpassfile_pointer",
        "env",
        "PGHOST=db-ledger.internal\nPGUSER=ledger_app\nPGPASSFILE=/run/secrets/pgpass",
    )
    # --- versions / build metadata
    B(
        "version_strings_changelog",
        "markdown",
        "## 2.14.0 (2026-11-28)\n- bump `grpcio` 1.67.1 → 1.68.0\n- bump `cryptography` 43.0.3 → 44.0.0\n- Go toolchain go1.23.4",
    )
    B(
        "go_pseudo_version",
        "config",
        f"require (\n\tgithub.com/acme/protos v0.0.0-20261119084512-{rhex(12)}\n\tgolang.org/x/crypto v0.29.0\n)",
    )
    B(
        "semver_build_metadata_sha",
        "log",
        f"acme-cli version 2.4.0+{rhex(7)} (built 2026-11-27T18:22:10Z, go1.23.4 linux/amd64)",
    )
    B(
        "docker_tag_with_sha",
        "shell_history",
        f"docker pull ghcr.io/acme/ledger-api:main-{rhex(7)}\ndocker tag ghcr.io/acme/ledger-api:main-{rhex(7)} ledger-api:local",
    )
    B(
        "python_wheel_filename",
        "log",
        "Successfully built acme_ledger-2.14.0-py3-none-any.whl\nCreated wheel for acme-ledger: filename=acme_ledger-2.14.0-py3-none-any.whl size=182311 sha256="
        + rhex(64),
    )
    B(
        "android_version_code_name",
        "code",
        'defaultConfig {\n    applicationId "dev.acme.field"\n    minSdk 26\n    targetSdk 35\n    versionCode 20611\n    versionName "6.11.0"\n}',
    )
    B(
        "kernel_uname_build_id",
        "log",
        f"Linux web03 6.8.0-49-generic #49-Ubuntu SMP PREEMPT_DYNAMIC Mon Nov  4 02:06:24 UTC 2024 x86_64 GNU/Linux\nBuild ID: {rhex(40)}",
    )

    # --- base64 of ordinary data
    def b64o(s):
        return b64(s.encode())

    B(
        "base64_k8s_configmap_binary_logo",
        "k8s",
        f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: branding\nbinaryData:\n  favicon.png: iVBORw0KGgoAAAANSUhEUgAAABAAAAAQ{b64(rbytes(90))}",
    )
    B(
        "base64_data_uri_svg_icon",
        "code",
        '.icon-check { background-image: url("data:image/svg+xml;base64,'
        + b64o(
            '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><path d="M6 11L3 8l1-1 2 2 5-5 1 1z"/></svg>'
        )
        + '"); }',
    )
    B(
        "base64_json_pagination_cursor",
        "url",
        "GET /api/v2/invoices?limit=50&cursor="
        + b64u(json.dumps({"created_at": "2026-11-29T22:10:03Z", "id": 918273}).encode()),
    )
    B(
        "base64_k8s_secret_username_only_configmap",
        "k8s",
        f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: feature-flags\ndata:\n  flags.json.b64: {b64o(json.dumps({'new_checkout': True, 'dark_mode': False}))}",
    )
    B(
        "base64_email_mime_attachment_text",
        "log",
        'Content-Type: text/plain; charset=utf-8; name="notes.txt"\nContent-Transfer-Encoding: base64\n\n'
        + b64o(
            "Meeting moved to Thursday 10:00, room Lovelace.\nAgenda: Q1 roadmap, hiring, offsite.\n"
        ),
    )
    B(
        "base64_protobuf_debug_log",
        "log",
        f"DEBUG grpc: sent message payload(b64)={b64(bytes([0x0A, 0x07]) + b'inv-221' + bytes([0x10, 0x96, 0x01]))}",
    )
    B(
        "base64_cloud_init_user_data",
        "yaml",
        "UserData: "
        + b64o(
            "#cloud-config\npackage_update: true\npackages:\n  - nginx\n  - fail2ban\nruncmd:\n  - systemctl enable --now nginx\n"
        ),
    )
    B(
        "base64_jwt_header_only_discussion",
        "chat",
        'every token starts with `eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9` because that\'s just the base64 of the header {"alg":"RS256","typ":"JWT"}',
    )
    B(
        "base64_saml_metadata_cert_public",
        "xml",
        f"<ds:X509Certificate>MIIC{b64(rbytes(420))}</ds:X509Certificate>",
    )
    B(
        "base64_gzip_helm_release_label",
        "log",
        f"NAME                          TYPE                 DATA   AGE\nsh.helm.release.v1.ledger.v41 helm.sh/release.v1   1      2d\n# data.release: H4sIAAAAAAAC/{b64(rbytes(60))}...",
    )
    B(
        "base64_webhook_payload_body",
        "log",
        "pubsub message data="
        + b64o(
            json.dumps(
                {"bucket": "acme-uploads", "name": "invoices/2026/11/INV-2291.pdf", "size": "48211"}
            )
        ),
    )
    B(
        "base64_basic_auth_docs_example",
        "markdown",
        "For example `Authorization: Basic dXNlcm5hbWU6cGFzc3dvcmQ=` is just `username:password` encoded — use your own credentials.",
    )
    # --- test fixtures / documented example credentials
    B(
        "aws_docs_example_keys",
        "markdown",
        "The CLI reads `~/.aws/credentials`:\n\n```ini\n[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n```",
    )
    B(
        "jwt_io_example_token_in_test",
        "code",
        '# canonical example from jwt.io, not a real token\nEXAMPLE = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"\nassert decode(EXAMPLE)["name"] == "John Doe"',
    )
    B(
        "test_fixture_dummy_password_assert",
        "code",
        'def test_rejects_short_password(client):\n    r = client.post("/signup", json={"email": "a@example.com", "password": "short"})\n    assert r.status_code == 422',
    )
    B(
        "test_fixture_fake_token_name",
        "code",
        'FAKE_TOKEN = "test-token"\n\n@pytest.fixture\ndef auth_headers():\n    return {"Authorization": f"Bearer {FAKE_TOKEN}"}',
    )
    B(
        "test_fixture_localhost_postgres_password_postgres",
        "yaml",
        "services:\n  postgres:\n    image: postgres:17\n    env:\n      POSTGRES_PASSWORD: postgres\n    ports: ['5432:5432']\n# CI-only throwaway database",
    )
    B(
        "docker_default_creds_docs",
        "markdown",
        "Default login for the local Grafana container is `admin` / `admin`; you'll be asked to change it on first login.",
    )
    B(
        "rabbitmq_guest_guest_docs",
        "markdown",
        "RabbitMQ ships with the `guest`/`guest` user, which can only connect from localhost.",
    )
    B(
        "android_debug_keystore_password",
        "markdown",
        "The debug keystore always uses store password `android` and key alias `androiddebugkey` — it's generated by the SDK.",
    )
    B(
        "stripe_test_card_numbers",
        "markdown",
        "Use `4242 4242 4242 4242` with any future expiry and any CVC in test mode; `4000 0000 0000 9995` simulates insufficient funds.",
    )
    B(
        "password_policy_text",
        "markdown",
        "Passwords must be at least 14 characters, may not contain the username and are checked against the HIBP k-anonymity API.",
    )
    B(
        "password_field_names_form_html",
        "code",
        '<label for="password">Password</label>\n<input type="password" id="password" name="password" autocomplete="current-password" required minlength="12">',
    )
    B(
        "password_reset_email_copy",
        "chat",
        "Hi Jana, your password was reset by an administrator. Use the link below within 24 hours to choose a new one.",
    )
    B(
        "password_empty_and_null_config",
        "yaml",
        'redis:\n  host: localhost\n  port: 6379\n  password: ""\nldap:\n  bind_password: null',
    )
    B(
        "password_hash_algorithm_config",
        "config",
        "password_encryption = scram-sha-256\nauthentication_timeout = 1min\nssl = on",
    )
    B(
        "password_cli_prompt_flag_no_value",
        "shell_history",
        "mysql -h db-ledger.internal -u ledger_app -p ledger\npsql -h db-ledger.internal -U ledger_app -W ledger",
    )
    B(
        "password_stdin_pattern",
        "shell_history",
        "aws ecr get-login-password --region eu-west-1 | docker login --username AWS --password-stdin "
        + rdig(12)
        + ".dkr.ecr.eu-west-1.amazonaws.com",
    )
    B(
        "secret_scanner_regex_rules",
        "toml",
        "[[rules]]\nid = \"github-pat\"\nregex = '''ghp_[0-9a-zA-Z]{36}'''\nkeywords = [\"ghp_\"]\n\n[[rules]]\nid = \"slack-bot\"\nregex = '''xoxb-[0-9]{10,13}-[0-9]{10,13}-[a-zA-Z0-9]{24}'''",
    )
    B(
        "gitleaks_allowlist_fingerprints",
        "config",
        "\n".join(
            f"{sha1()}:tests/fixtures/cassettes/{n}.yaml:generic-api-key:{R.randint(3, 90)}"
            for n in ["stripe_refund", "partner_orders"]
        ),
    )
    B(
        "commit_message_rotate_token_no_value",
        "commit",
        "chore(ci): rotate NPM_TOKEN\n\nThe old automation token was revoked; the new one lives in the org secrets.\nNo code change.",
    )
    B(
        "commit_message_remove_leaked_key_no_value",
        "commit",
        "security: purge accidentally committed .env from history\n\nThe key it contained was revoked within 10 minutes (INC-882).\nRewrote history with git filter-repo; everyone please re-clone.",
    )
    # --- multilingual chat that talks about secrets without containing one
    chats = [
        (
            "german",
            "Das Passwort für die Staging-DB liegt im Vault unter kv/staging/ledger, bitte nicht hier posten.",
        ),
        (
            "french",
            "J'ai révoqué l'ancien jeton GitHub ce matin, le nouveau est dans les secrets de l'organisation.",
        ),
        ("spanish", "El commit {sha} rompió el login, lo revierto y abro un PR con el fix."),
        (
            "portuguese_br",
            "Troquei a senha do banco ontem à noite; quem precisar pede acesso no 1Password.",
        ),
        (
            "italian",
            "La chiave API è scaduta, l'ho rigenerata dal pannello e aggiornata nel secret manager.",
        ),
        ("dutch", "Build {sha7} staat op staging, kun je de checkout-flow even testen?"),
        ("polish", "Token do rejestru jest w zmiennych CI (maskowany), nie wklejaj go do logów."),
        ("russian", "Я откатил деплой на {sha7}, пароль к базе не менялся."),
        ("ukrainian", "Хеш релізу: sha256 {sha256}, перевір перед встановленням."),
        ("turkish", "Şifreyi Bitwarden'a koydum, klasör adı 'prod-db'."),
        (
            "japanese",
            "パスワードは1Passwordの「Infra」保管庫に入れました。チャットには貼らないでください。",
        ),
        ("korean", "커밋 {sha7} 에서 회귀가 생겼어요. 리버트할게요."),
        ("chinese_simplified", "密钥已经轮换了，新的在 Vault 里，路径是 kv/prod/payments。"),
        ("chinese_traditional", "請求 ID {uuid} 的日誌我已經貼在工單裡了。"),
        ("vietnamese", "Mình đã đổi mật khẩu rồi, anh lấy trong Bitwarden nhé."),
        ("indonesian", "Token lama sudah dicabut, yang baru ada di secret GitHub Actions."),
        ("arabic", "تم تغيير كلمة المرور، ستجدها في خزنة الفريق."),
        ("hindi", "नया टोकन GitHub secrets में डाल दिया है, पुराना रद्द कर दिया।"),
        ("swedish", "Releasen är taggad som v2.14.0 ({sha7}), changelog kommer i eftermiddag."),
        ("finnish", "Salasana on tiimin holvissa, en laita sitä tänne."),
        ("czech", "Heslo najdeš v Bitwardenu ve složce Infra, sem ho prosím nedávej."),
        ("greek", "Άλλαξα τον κωδικό, θα τον βρεις στο 1Password."),
        ("hebrew", "הסיסמה נמצאת בכספת של הצוות, אל תדביקו אותה בצ'אט."),
        ("thai", "รหัสผ่านอยู่ในตู้เซฟของทีมแล้ว อย่าแปะในแชทนะ"),
        ("romanian", "Am rotit cheia API; cea nouă e în Vault, la kv/prod/api."),
    ]
    for lang, t in chats:
        B(
            f"chat_{lang}_mentions_secret_no_value",
            "chat",
            t.replace("{sha}", sha1())
            .replace("{sha7}", rhex(7))
            .replace("{sha256}", rhex(64))
            .replace("{uuid}", uuid4()),
        )
    # --- other random-looking identifiers
    B(
        "mac_addresses_dhcp_leases",
        "config",
        "\n".join(
            f"host {h} {{ hardware ethernet {':'.join(rhex(2) for _ in range(6))}; fixed-address 10.0.1.{i}; }}"
            for i, h in [(21, "printer-2f"), (22, "nas-01"), (23, "ap-lobby")]
        ),
    )
    B(
        "ipv6_addresses_config",
        "config",
        f"listen [2001:db8:{rhex(4)}:{rhex(4)}::1]:443 ssl;\nset_real_ip_from 2001:db8:{rhex(4)}::/48;",
    )
    B(
        "css_hex_colors",
        "code",
        ":root {\n  --brand: #"
        + rhex(6)
        + ";\n  --brand-dark: #"
        + rhex(6)
        + ";\n  --surface: #"
        + rhex(6)
        + ";\n}",
    )
    B(
        "s3_object_keys_with_hashes",
        "log",
        "\n".join(
            f"2026-11-30 09:1{i}:02    {R.randint(1000, 99999)} uploads/{rhex(2)}/{rhex(32)}.jpg"
            for i in range(3)
        ),
    )
    B(
        "tracking_and_order_numbers",
        "chat",
        f"Order #A{rdig(9)} shipped, DHL tracking {rdig(10)}, invoice INV-2026-{rdig(5)}",
    )
    B(
        "hardware_serial_numbers_inventory",
        "markdown",
        f"| asset | model | serial |\n|---|---|---|\n| LT-0442 | ThinkPad T14 G5 | PF{rs(6, UP + DIG)} |\n| LT-0443 | MacBook Pro 14 | {rs(10, UP + DIG)} |",
    )
    B(
        "spdx_license_and_purl",
        "json",
        json.dumps(
            {
                "SPDXID": "SPDXRef-Package-" + rhex(16),
                "name": "lodash",
                "licenseConcluded": "MIT",
                "externalRefs": [
                    {"referenceType": "purl", "referenceLocator": "pkg:npm/lodash@4.17.21"}
                ],
            }
        ),
    )
    B(
        "cve_and_ghsa_ids",
        "commit",
        f"deps: bump jsonwebtoken to 9.0.2\n\nAddresses CVE-2022-23529 and GHSA-{rs(4, LOW + DIG)}-{rs(4, LOW + DIG)}-{rs(4, LOW + DIG)}.",
    )
    B(
        "kubernetes_service_account_token_path",
        "k8s",
        "      volumes:\n        - name: token\n          projected:\n            sources:\n              - serviceAccountToken:\n                  path: token\n                  expirationSeconds: 3600\n                  audience: vault",
    )
    B(
        "token_file_flag_path_only",
        "cli",
        "kubectl --token-file=/var/run/secrets/kubernetes.io/serviceaccount/token --server https://10.96.0.1 get pods",
    )
    B(
        "password_file_flag_path_only",
        "cli",
        "restic -r s3:s3.eu-west-1.amazonaws.com/acme-backups --password-file /etc/restic/pass snapshots",
    )
    B(
        "hex_memory_dump_ordinary",
        "log",
        "00000000  7f 45 4c 46 02 01 01 00  00 00 00 00 00 00 00 00  |.ELF............|\n00000010  03 00 3e 00 01 00 00 00  40 10 00 00 00 00 00 00  |..>.....@.......|",
    )
    B(
        "session_cookie_name_only_docs",
        "markdown",
        "The app sets two cookies: `__Host-session` (HttpOnly, Secure, SameSite=Lax) and `csrftoken`; neither is readable from JS.",
    )
    B(
        "csrf_meta_tag_template_variable",
        "code",
        '<meta name="csrf-token" content="{{ csrf_token() }}">',
    )
    B(
        "random_seed_and_hyperparams",
        "yaml",
        f"seed: {rdig(9)}\nlr: 3.0e-4\nbatch_size: 64\nrun_id: {rhex(8)}\nwandb_project: acme-rerank",
    )
    B(
        "feature_flag_keys_launchdarkly",
        "json",
        json.dumps(
            {
                "flags": {
                    "new-checkout-flow": {"variation": 1, "version": 42},
                    "dark-mode": {"variation": 0, "version": 7},
                }
            }
        ),
    )
    B(
        "cron_schedule_and_job_hash",
        "yaml",
        'schedule: "H 3 * * 1-5"\njob: nightly-export\nchecksum/config: ' + rhex(64),
    )
    B(
        "helm_checksum_annotation",
        "k8s",
        f"  template:\n    metadata:\n      annotations:\n        checksum/config: {rhex(64)}\n        checksum/secret: {rhex(64)}",
    )
    B(
        "terraform_plan_resource_ids",
        "log",
        f'  # aws_security_group.web will be updated in-place\n  ~ resource "aws_security_group" "web" {{\n        id          = "sg-{rhex(17)}"\n        name        = "web"\n        vpc_id      = "vpc-{rhex(17)}"\n    }}',
    )
    B(
        "ec2_instance_and_ami_ids",
        "shell_history",
        f"aws ec2 run-instances --image-id ami-{rhex(17)} --instance-type t4g.small --subnet-id subnet-{rhex(17)} --key-name lea-laptop",
    )
    B(
        "gcp_project_number_and_sa_email",
        "cli",
        f"gcloud projects add-iam-policy-binding acme-prod --member=serviceAccount:{rdig(12)}-compute@developer.gserviceaccount.com --role=roles/logging.logWriter",
    )
    B(
        "azure_resource_id",
        "json",
        json.dumps(
            {
                "id": f"/subscriptions/{uuid4()}/resourceGroups/rg-prod-weu/providers/Microsoft.Web/sites/acme-api",
                "location": "westeurope",
            }
        ),
    )
    B(
        "npm_audit_advisory_ids",
        "log",
        "# npm audit report\n\ncross-spawn  7.0.0 - 7.0.4\nSeverity: high\nRegular Expression Denial of Service - https://github.com/advisories/GHSA-3xgq-45jj-v275\nfix available via `npm audit fix`",
    )
    B(
        "lockfile_resolved_url_with_hash_fragment",
        "yaml",
        f'"left-pad@npm:1.3.0":\n  version: 1.3.0\n  resolution: "left-pad@npm:1.3.0"\n  checksum: 10c0/{rhex(128)}',
    )
    B(
        "vscode_extension_ids",
        "json",
        json.dumps(
            {
                "recommendations": [
                    "ms-python.python",
                    "charliermarsh.ruff",
                    "tamasfe.even-better-toml",
                ]
            }
        ),
    )
    B(
        "commit_signed_off_chain",
        "commit",
        "net: fix refcount leak in tcp_splice\n\nSigned-off-by: Ana Ruiz <ana@acme.dev>\nAcked-by: Tomasz Wiśniewski <tw@acme.dev>\nReviewed-by: Chen Wei <chen.wei@acme.dev>\nLink: https://lore.kernel.org/r/20261128101112.4411-1-ana@acme.dev",
    )
    B(
        "sql_migration_checksums_flyway",
        "sql",
        "SELECT installed_rank, version, description, checksum FROM flyway_schema_history ORDER BY installed_rank DESC LIMIT 3;\n-- 41 | 2026.11.28.1 | add invoice index | -"
        + rdig(9),
    )
    B(
        "sql_uuid_and_hash_columns",
        "sql",
        f"INSERT INTO uploads (id, sha256, size_bytes, mime) VALUES ('{uuid4()}', '{rhex(64)}', 48211, 'application/pdf');",
    )
    B(
        "sql_password_column_ddl",
        "sql",
        "CREATE TABLE users (\n  id bigserial PRIMARY KEY,\n  email citext UNIQUE NOT NULL,\n  password_hash text NOT NULL,\n  password_changed_at timestamptz\n);",
    )
    B(
        "markdown_table_env_var_names",
        "markdown",
        "| variable | required | description |\n|---|---|---|\n| `DATABASE_URL` | yes | Postgres DSN |\n| `JWT_SECRET` | yes | 32+ random bytes, generate with `openssl rand -base64 32` |\n| `SENTRY_DSN` | no | error reporting |",
    )
    B(
        "openssl_rand_instruction_no_output",
        "markdown",
        "Generate the signing key once per environment with `openssl rand -hex 32` and store it in Vault; never commit it.",
    )
    B(
        "python_secrets_token_call",
        "code",
        'def new_api_key() -> str:\n    return "ak_" + secrets.token_urlsafe(32)',
    )
    B(
        "url_non_secret_query_params",
        "url",
        "https://app.acme.dev/reports?from=2026-11-01&to=2026-11-30&tz=Europe%2FBerlin&view=table&sort=-amount&page=2&utm_source=newsletter&utm_campaign=nov",
    )
    B(
        "url_signed_download_expired_public_docs",
        "markdown",
        "Download links are pre-signed and expire after 15 minutes (`X-Amz-Expires=900`), so bookmarking them won't work.",
    )
    B(
        "curl_public_api_no_auth",
        "cli",
        "curl -s 'https://api.github.com/repos/acme/ledger/releases/latest' | jq -r .tag_name",
    )
    B(
        "stack_trace_no_secret",
        "log",
        'Traceback (most recent call last):\n  File "/app/worker.py", line 41, in run\n    job = queue.get(timeout=5)\n  File "/usr/lib/python3.12/queue.py", line 179, in get\n    raise Empty\n_queue.Empty',
    )
    B(
        "java_stack_trace_with_hash_codes",
        "log",
        f"java.lang.IllegalStateException: Session closed\n\tat com.acme.ledger.SessionPool.borrow(SessionPool.java:88)\n\tat com.acme.ledger.Worker$$Lambda$412/0x{rhex(16)}.run(Unknown Source)\n\tat java.base/java.lang.Thread.run(Thread.java:1583)\nsession=com.acme.ledger.Session@{rhex(8)}",
    )
    B(
        "go_test_output_random_ids",
        "log",
        f"--- FAIL: TestInvoiceTotals/eur_rounding (0.00s)\n    totals_test.go:88: got 10.005, want 10.01 (invoice {uuid4()})\nFAIL\tgithub.com/acme/ledger/internal/totals\t0.412s",
    )
    B(
        "rust_panic_with_hex_address",
        "log",
        f"thread 'main' panicked at src/store.rs:212:14:\ncalled `Option::unwrap()` on a `None` value\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n   0: 0x{rhex(12)} - std::panicking::begin_panic_handler",
    )
    B(
        "dockerfile_args_versions",
        "dockerfile",
        "ARG NODE_VERSION=22.11.0\nARG PNPM_VERSION=9.14.2\nFROM node:${NODE_VERSION}-bookworm-slim\nRUN corepack enable && corepack prepare pnpm@${PNPM_VERSION} --activate",
    )
    B(
        "compose_healthcheck_and_ports",
        "compose",
        'services:\n  api:\n    image: acme/api:2.14.0\n    ports: ["8080:8080"]\n    healthcheck:\n      test: ["CMD", "curl", "-f", "http://localhost:8080/healthz"]\n      interval: 10s',
    )
    B(
        "ini_section_with_key_names_only",
        "ini",
        "[auth]\nprovider = oidc\nclient_id = grafana\nscopes = openid profile email\nallow_sign_up = true\nauto_login = false",
    )
    B(
        "toml_key_id_not_secret",
        "toml",
        f'[signing]\nkey_id = "{rHEX(16)}"\nkeyring = "/etc/apt/keyrings/acme.gpg"\nalgorithm = "ed25519"',
    )
    B(
        "xml_pom_dependency_versions",
        "xml",
        "<dependency>\n  <groupId>org.postgresql</groupId>\n  <artifactId>postgresql</artifactId>\n  <version>42.7.4</version>\n</dependency>",
    )
    B(
        "hcl_backend_config_no_creds",
        "hcl",
        'terraform {\n  backend "s3" {\n    bucket         = "acme-tfstate"\n    key            = "ledger/prod.tfstate"\n    region         = "eu-west-1"\n    dynamodb_table = "tf-locks"\n    encrypt        = true\n  }\n}',
    )
    B(
        "yaml_openapi_security_scheme",
        "yaml",
        "components:\n  securitySchemes:\n    bearerAuth:\n      type: http\n      scheme: bearer\n      bearerFormat: JWT\n    apiKey:\n      type: apiKey\n      in: header\n      name: X-API-Key",
    )
    B(
        "json_schema_password_format",
        "json",
        json.dumps(
            {
                "type": "object",
                "properties": {
                    "password": {
                        "type": "string",
                        "format": "password",
                        "minLength": 12,
                        "writeOnly": True,
                    }
                },
                "required": ["password"],
            },
            indent=2,
        ),
    )
    B(
        "graphql_mutation_variables_names",
        "code",
        "mutation RotateKey($id: ID!) {\n  rotateApiKey(id: $id) {\n    key { id lastFour createdAt }\n  }\n}",
    )
    B(
        "api_key_metadata_response_no_secret",
        "json",
        json.dumps(
            {
                "id": "key_" + rs(20),
                "name": "ci-deploy",
                "last_four": rs(4),
                "created_at": "2026-11-02T08:00:00Z",
                "scopes": ["deploy:write"],
            }
        ),
    )
    B(
        "vault_token_lookup_metadata_only",
        "log",
        f"Key                 Value\n---                 -----\ncreation_time       1764460800\ndisplay_name        approle\nentity_id           {uuid4()}\npolicies            [default ledger-read]\nttl                 59m12s",
    )
    B(
        "pre_commit_hook_revs",
        "yaml",
        "repos:\n  - repo: https://github.com/astral-sh/ruff-pre-commit\n    rev: v0.8.1\n    hooks:\n      - id: ruff\n  - repo: https://github.com/gitleaks/gitleaks\n    rev: v8.21.2\n    hooks:\n      - id: gitleaks",
    )
    B(
        "readme_badge_urls",
        "markdown",
        "[![CI](https://github.com/acme/ledger/actions/workflows/ci.yml/badge.svg)](https://github.com/acme/ledger/actions) [![codecov](https://codecov.io/gh/acme/ledger/graph/badge.svg)](https://codecov.io/gh/acme/ledger)",
    )
    B(
        "notebook_output_cell_dataframe_ids",
        "json",
        json.dumps(
            {
                "output_type": "execute_result",
                "data": {
                    "text/plain": [
                        "            order_id  amount\n0  "
                        + uuid4()
                        + "   19.90\n1  "
                        + uuid4()
                        + "   42.00"
                    ]
                },
            }
        ),
    )
    B(
        "license_header_copyright",
        "code",
        "// Copyright 2026 Acme GmbH\n// SPDX-License-Identifier: Apache-2.0",
    )
    B(
        "shell_history_ordinary_commands",
        "shell_history",
        "cd ~/src/ledger\ngit pull --rebase\nmake test\ngit log --oneline -5\ngh pr create --fill --draft",
    )
    B(
        "ssh_config_no_secrets",
        "config",
        "Host bastion\n  HostName bastion.acme.dev\n  User lea\n  IdentityFile ~/.ssh/id_ed25519\n  IdentitiesOnly yes\n\nHost db-*\n  ProxyJump bastion",
    )
    B(
        "netrc_without_password_field",
        "config",
        "machine api.heroku.com\n  login lea@acme.dev\nmachine git.heroku.com\n  login lea@acme.dev\n# passwords are managed by `heroku login` via the keychain",
    )
    B(
        "gitconfig_credential_helper",
        "config",
        '[credential]\n\thelper = osxkeychain\n[credential "https://git.acme.dev"]\n\tusername = lfischer\n[user]\n\tsigningkey = '
        + rHEX(16),
    )
    B(
        "kubeconfig_exec_plugin_no_token",
        "yaml",
        "users:\n- name: aks-prod\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: kubelogin\n      args: [get-token, --login, azurecli, --server-id, "
        + uuid4()
        + "]",
    )
    B(
        "aws_config_sso_profile",
        "ini",
        f"[profile prod]\nsso_session = acme\nsso_account_id = {rdig(12)}\nsso_role_name = ReadOnly\nregion = eu-west-1\n\n[sso-session acme]\nsso_start_url = https://acme.awsapps.com/start\nsso_region = eu-west-1",
    )
    B(
        "nginx_config_no_secret_but_hashes",
        "config",
        f"add_header Content-Security-Policy \"script-src 'self' 'sha256-{b64(rbytes(32))}'\";\nssl_certificate /etc/letsencrypt/live/acme.dev/fullchain.pem;\nssl_certificate_key /etc/letsencrypt/live/acme.dev/privkey.pem;",
    )
    B(
        "pem_key_path_references",
        "yaml",
        "tls:\n  certFile: /etc/ssl/acme/tls.crt\n  keyFile: /etc/ssl/acme/tls.key\n  caFile: /etc/ssl/acme/ca.crt",
    )
    B(
        "session_note_describes_rotation",
        "notes",
        "Session 2026-11-29: rotated the Stripe webhook secret (dashboard → Developers → Webhooks → Roll secret), updated kv/payments/stripe in Vault, redeployed payments-api. Verified with `stripe trigger payment_intent.succeeded`.",
    )
    B(
        "session_note_test_run_ids",
        "notes",
        f"Ran the e2e suite twice: run {uuid4()} (23/24 pass, flaky `checkout.spec.ts:88`), run {uuid4()} (24/24). Build {rhex(7)}.",
    )
    B(
        "agent_transcript_tool_call_ids",
        "json",
        json.dumps(
            {
                "type": "tool_use",
                "id": "toolu_" + rs(24),
                "name": "bash",
                "input": {"command": "pytest -q tests/test_totals.py"},
            }
        ),
    )
    B(
        "openai_response_ids",
        "json",
        json.dumps(
            {
                "id": "chatcmpl-" + rs(29),
                "object": "chat.completion",
                "model": "gpt-4.1-mini-2025-04-14",
                "system_fingerprint": "fp_" + rhex(10),
            }
        ),
    )
    B(
        "anthropic_message_ids",
        "json",
        json.dumps(
            {
                "id": "msg_" + rs(24),
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 1820, "output_tokens": 211},
            }
        ),
    )
    B(
        "huggingface_model_revision_sha",
        "code",
        f'model = AutoModel.from_pretrained("BAAI/bge-m3", revision="{sha1()}")',
    )
    B("wandb_run_url", "url", f"View run at https://wandb.ai/acme/rerank/runs/{rs(8, LOW + DIG)}")
    B(
        "jupyter_kernel_connection_file_path",
        "log",
        f"[I 2026-11-30 10:02:11.918 ServerApp] Kernel started: {uuid4()}\n[I 2026-11-30 10:02:12.004 ServerApp] Connecting to: tcp://127.0.0.1:{R.randint(40000, 60000)}",
    )
    B(
        "onion_address_public_service",
        "markdown",
        f"Mirror also available at `http://{rs(56, 'abcdefghijklmnopqrstuvwxyz234567')}.onion/`",
    )
    B(
        "lorem_ipsum_with_password_word",
        "markdown",
        "The word *password* appears in the UI copy 14 times; design wants it replaced with *passphrase* everywhere except the reset flow.",
    )
    B(
        "acme_challenge_token_public",
        "log",
        f"Challenge URL: http://acme.dev/.well-known/acme-challenge/{rs(43, ALNUM + '-_')}\nStatus: valid",
    )
    B(
        "dkim_public_txt_record",
        "config",
        f'selector1._domainkey.acme.dev. 3600 IN TXT "v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA{b64(rbytes(200))}"',
    )
    B(
        "spf_dmarc_records",
        "config",
        'acme.dev. IN TXT "v=spf1 include:_spf.google.com include:sendgrid.net ~all"\n_dmarc.acme.dev. IN TXT "v=DMARC1; p=quarantine; rua=mailto:dmarc@acme.dev"',
    )
    B(
        "google_site_verification_txt",
        "config",
        f'acme.dev. 300 IN TXT "google-site-verification={rs(43, ALNUM + "-_")}"',
    )
    B(
        "docker_buildx_cache_digest_log",
        "log",
        f"#12 exporting to image\n#12 writing image sha256:{rhex(64)} done\n#12 naming to ghcr.io/acme/ledger-api:2.14.0 done",
    )
    B(
        "yubikey_otp_public_id_doc",
        "markdown",
        "Each YubiKey OTP starts with the 12-char public ID (e.g. `cccccbcgujhi`) followed by a one-time part that is useless once used.",
    )

    # --- near misses: key names, references and public material next to secret-looking words
    B(
        "env_file_non_secret_settings_with_secret_words",
        "env",
        "PASSWORD_MIN_LENGTH=12\nTOKEN_TTL_SECONDS=3600\nSECRET_ROTATION_DAYS=90\nAPI_KEY_HEADER=X-API-Key\nPASSWORD_HASHER=argon2id",
    )
    B(
        "env_file_required_interpolation",
        "env",
        "SECRET_KEY=${SECRET_KEY:?SECRET_KEY must be set}\nDATABASE_URL=${DATABASE_URL}\nSENTRY_DSN=",
    )
    B(
        "env_secret_file_paths",
        "env",
        "POSTGRES_PASSWORD_FILE=/run/secrets/postgres_password\nMINIO_ROOT_PASSWORD_FILE=/run/secrets/minio_root\nGF_SECURITY_ADMIN_PASSWORD__FILE=/run/secrets/grafana_admin",
    )
    B(
        "compose_secrets_file_reference",
        "compose",
        "services:\n  db:\n    image: postgres:17\n    environment:\n      POSTGRES_PASSWORD_FILE: /run/secrets/db_password\n    secrets: [db_password]\nsecrets:\n  db_password:\n    file: ./secrets/db_password.txt",
    )
    B(
        "compose_env_file_directive",
        "compose",
        "services:\n  api:\n    image: acme/api:2.14.0\n    env_file:\n      - .env\n      - .env.local\n    environment:\n      LOG_LEVEL: info",
    )
    B(
        "compose_healthcheck_pg_isready",
        "compose",
        '    healthcheck:\n      test: ["CMD-SHELL", "pg_isready -U $${POSTGRES_USER} -d $${POSTGRES_DB}"]\n      interval: 5s\n      retries: 10',
    )
    B(
        "home_assistant_secret_reference",
        "yaml",
        "mqtt:\n  broker: 192.168.1.20\n  username: homeassistant\n  password: !secret mqtt_password\nweather:\n  api_key: !secret owm_key",
    )
    B(
        "ini_password_interpolation_reference",
        "ini",
        "[database]\nhost = db.acme.internal\nuser = reporting\npassword = %(REPORTING_DB_PASSWORD)s\n\n[cache]\nurl = redis://localhost:6379/2",
    )
    B(
        "ini_empty_password_with_comment",
        "ini",
        "[smtp]\nhost = localhost\nport = 1025\n; mailpit in dev needs no auth\nuser =\npassword =",
    )
    B(
        "ini_pip_conf_index_no_creds",
        "ini",
        "[global]\nindex-url = https://pypi.org/simple\nextra-index-url = https://pypi.acme.internal/simple/\ntrusted-host = pypi.acme.internal",
    )
    B(
        "toml_password_env_indirection",
        "toml",
        '[database]\nurl = { env = "DATABASE_URL" }\npool_size = 10\n\n[auth]\njwt_secret = { env = "JWT_SECRET" }',
    )
    B(
        "toml_netlify_headers_csp",
        "toml",
        '[[headers]]\n  for = "/*"\n  [headers.values]\n    X-Frame-Options = "DENY"\n    Strict-Transport-Security = "max-age=63072000; includeSubDomains; preload"',
    )
    B(
        "toml_uv_index_without_creds",
        "toml",
        '[[tool.uv.index]]\nname = "acme"\nurl = "https://pypi.acme.internal/simple/"\nauthenticate = "always"\n# credentials come from UV_INDEX_ACME_USERNAME / UV_INDEX_ACME_PASSWORD',
    )
    B(
        "xml_maven_password_property_reference",
        "xml",
        "<server>\n  <id>acme-releases</id>\n  <username>${env.MAVEN_USERNAME}</username>\n  <password>${env.MAVEN_PASSWORD}</password>\n</server>",
    )
    B(
        "xml_nuget_password_env_var",
        "xml",
        '<packageSourceCredentials>\n  <AcmeFeed>\n    <add key="Username" value="build" />\n    <add key="ClearTextPassword" value="%NUGET_FEED_PAT%" />\n  </AcmeFeed>\n</packageSourceCredentials>',
    )
    B(
        "xml_android_strings_password_labels",
        "xml",
        '<resources>\n    <string name="password_hint">Password</string>\n    <string name="password_too_short">Use at least 12 characters</string>\n    <string name="forgot_password">Forgot password?</string>\n</resources>',
    )
    B(
        "xml_web_config_integrated_security",
        "xml",
        '<connectionStrings>\n  <add name="Default" connectionString="Server=sql01;Database=crm;Integrated Security=True;TrustServerCertificate=True" />\n</connectionStrings>',
    )
    B(
        "sql_password_reset_token_null_check",
        "sql",
        "DELETE FROM password_reset_tokens WHERE expires_at < now() - interval '1 day';\nSELECT count(*) FROM users WHERE password_hash IS NULL;",
    )
    B(
        "sql_grant_without_password",
        "sql",
        "CREATE ROLE analytics_ro NOLOGIN;\nGRANT USAGE ON SCHEMA marts TO analytics_ro;\nGRANT SELECT ON ALL TABLES IN SCHEMA marts TO analytics_ro;",
    )
    B(
        "sql_pg_stat_activity_output",
        "sql",
        f" pid  | usename    | application_name | state  | query_id\n------+------------+------------------+--------+---------------------\n {rdig(5)} | ledger_app | ledger-api       | active | {rdig(19)}",
    )
    B(
        "url_userinfo_without_password",
        "url",
        "git clone ssh://git@git.acme.dev:2222/platform/infra.git\ngit remote add upstream https://lfischer@github.com/acme/ledger.git",
    )
    B(
        "url_localhost_dsns_without_password",
        "url",
        "DATABASE_URL=postgres://app@localhost:5432/app_dev\nREDIS_URL=redis://localhost:6379/0\nAMQP_URL=amqp://localhost:5672/",
    )
    B(
        "url_share_link_public_doc",
        "url",
        f"Public roadmap: https://www.notion.so/acme/Public-Roadmap-{rhex(32)}",
    )
    B(
        "url_github_blob_permalink_sha",
        "url",
        f"https://github.com/acme/ledger/blob/{sha1()}/src/totals.py#L40-L58",
    )
    B(
        "cli_password_stdin_and_file_patterns",
        "cli",
        "gh auth login --with-token < ~/.config/acme/gh-token\ncat ~/.npm-token | npm login --auth-type=legacy --registry https://npm.acme.internal/",
    )
    B(
        "cli_token_from_command_substitution",
        "cli",
        'curl -H "Authorization: Bearer $(gcloud auth print-identity-token)" https://ledger-api-'
        + rs(10, LOW + DIG)
        + "-ew.a.run.app/healthz",
    )
    B(
        "cli_vault_kv_get_no_output",
        "cli",
        "vault kv get -field=password kv/prod/ledger/db | pbcopy",
    )
    B(
        "notes_incident_timeline_no_secret",
        "notes",
        "INC-882 timeline\n10:02 .env with STRIPE_SECRET_KEY pushed to public fork\n10:05 key rolled in Stripe dashboard\n10:12 fork deleted, GitHub support ticket 2918812 opened\nNo charges made with the old key.",
    )
    B(
        "notes_session_summary_with_shas",
        "notes",
        f"Session summary: merged #4410 ({rhex(7)}), rebased feat/csv onto main ({rhex(7)}), opened #4415. Next: flaky test in totals_test.go.",
    )
    B(
        "notes_credential_inventory_without_values",
        "notes",
        "Credentials to rotate before offboarding Tom:\n- AWS IAM user tom.r (access key ending ...Q7XA)\n- GitHub PAT 'laptop-2025'\n- shared Grafana admin (in 1Password)",
    )
    B(
        "kubeconfig_ca_data_public_cert",
        "yaml",
        "clusters:\n- cluster:\n    certificate-authority-data: "
        + b64((pem("CERTIFICATE", bytes.fromhex("308201") + rbytes(300)) + "\n").encode())
        + "\n    server: https://10.0.0.1:6443\n  name: kind-dev",
    )
    B(
        "git_commit_gpgsig_header",
        "log",
        "tree "
        + sha1()
        + "\nparent "
        + sha1()
        + "\nauthor Lea Fischer <lea@acme.dev> 1764500000 +0100\ncommitter Lea Fischer <lea@acme.dev> 1764500000 +0100\ngpgsig -----BEGIN SSH SIGNATURE-----\n U1NIU0lHAAAAAQAAADMAAAALc3NoLWVkMjU1MTkAAAAg"
        + b64(rbytes(60))
        + "\n -----END SSH SIGNATURE-----\n\n    docs: update release checklist",
    )
    B(
        "pem_certificate_request_csr",
        "config",
        pem("CERTIFICATE REQUEST", bytes.fromhex("308202") + rbytes(560)),
    )
    B(
        "webhook_signature_header_github",
        "log",
        f"POST /webhooks/github 200 12ms\nX-GitHub-Delivery: {uuid4()}\nX-GitHub-Event: pull_request\nX-Hub-Signature-256: sha256={rhex(64)}",
    )
    B(
        "stripe_signature_header_log",
        "log",
        f"stripe-signature: t=1764500000,v1={rhex(64)},v0={rhex(64)}\nevent evt_{rs(24)} verified",
    )
    B(
        "sentry_event_id_user_report",
        "chat",
        f"got a crash on checkout, Sentry event id {rhex(32)} if someone wants to look",
    )
    B(
        "apple_notarization_submission_id",
        "log",
        f"Submission ID received\n  id: {uuid4()}\nSuccessfully uploaded file\nWaiting for processing to complete.\nCurrent status: Accepted",
    )
    B(
        "csp_nonce_template_variable",
        "code",
        '<script nonce="{{ request.csp_nonce }}">window.__APP_VERSION__ = "2.14.0";</script>',
    )
    B(
        "chat_korean_password_word_no_value",
        "chat",
        "비밀번호 재설정 메일이 스팸함으로 간다는 문의가 또 들어왔어요. SPF 레코드 확인 부탁드립니다.",
    )
    B(
        "chat_german_token_expired_no_value",
        "chat",
        "Der CI-Token ist gestern abgelaufen, deshalb sind alle Nightlies rot. Ich erneuere ihn gleich in den Org-Secrets.",
    )
    B(
        "chat_spanish_rotate_keys_no_value",
        "chat",
        "Ya roté las claves de AWS del usuario de despliegue; las nuevas están en Secrets Manager (prod/deploy).",
    )
    B(
        "chat_french_git_sha_discussion",
        "chat",
        f"Le bug apparaît à partir de {rhex(10)}, avant ça les totaux sont corrects.",
    )
    B(
        "chat_japanese_uuid_ticket",
        "chat",
        f"テナント {uuid4()} の請求書が二重に作成されています。調査中です。",
    )


def main():
    provider()
    provider_prose()
    context()
    benign()
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "corpus_heldout9.jsonl"), "w", encoding="utf-8") as f:
        for row in CORPUS:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    with open(os.path.join(here, "benign_heldout9.jsonl"), "w", encoding="utf-8") as f:
        for row in BENIGN:
            f.write(
                json.dumps({"source": row["source"], "text": row["text"]}, ensure_ascii=False)
                + "\n"
            )
    shapes = Counter(r["shape"] for r in CORPUS)
    print(f"corpus: {len(CORPUS)} ({dict(shapes)})", file=sys.stderr)
    by = Counter((CTX[r["kind"]], r["shape"]) for r in CORPUS)
    for ctx in sorted({c for c, _ in by}):
        print(
            f"  {ctx:14s} provider={by[(ctx, 'provider')]:3d} context={by[(ctx, 'context')]:3d}",
            file=sys.stderr,
        )
    bc = Counter(r["_ctx"] for r in BENIGN)
    print(f"benign: {len(BENIGN)}", file=sys.stderr)
    for ctx in sorted(bc):
        print(f"  {ctx:14s} {bc[ctx]:3d}", file=sys.stderr)


if __name__ == "__main__":
    main()
