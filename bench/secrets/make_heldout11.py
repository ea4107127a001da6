# ruff: noqa
"""Generate held-out set 11 for the gitvault secret-redaction filter.

How this was written (blind):
  * Written without reading the filter (gitvault/), its tests, the other
    bench generators (bench/secrets/make_*.py), the other corpora, or the
    bench README.  The only things read from the project were the first three
    lines of corpus_heldout10.jsonl and benign_heldout10.jsonl (for the JSONL
    format) and the list of `kind` values of sets 8, 9 and 10, so that every
    kind below is new.  The filter was never run on this output.
  * Every credential is a fake random string of the right shape produced by a
    single seeded random.Random; vendor checksums are computed where the
    vendor format publishes one (GitHub / npm CRC32-base62 suffix, bech32 for
    age and nostr keys, Base58Check for Bitcoin WIF keys).  None of them opens
    anything.
  * Standard library only, deterministic.  Running it writes
    corpus_heldout11.jsonl and benign_heldout11.jsonl next to this file.
"""

import base64
import binascii
import hashlib
import json
import os
import random
import string
import sys
import urllib.parse
import uuid
import zlib

SEED = 11_2025_0611
R = random.Random(SEED)
HERE = os.path.dirname(os.path.abspath(__file__))

# --------------------------------------------------------------------------
# small random helpers
# --------------------------------------------------------------------------
LOW = string.ascii_lowercase
UP = string.ascii_uppercase
DIG = string.digits
ALNUM = LOW + UP + DIG
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
HEXD = "0123456789abcdef"


def rs(n, alphabet=ALNUM):
    return "".join(R.choice(alphabet) for _ in range(n))


def hx(n):
    return rs(n, HEXD)


def b64n(nbytes):
    return base64.b64encode(bytes(R.getrandbits(8) for _ in range(nbytes))).decode()


def rbytes(n):
    return bytes(R.getrandbits(8) for _ in range(n))


def ruuid():
    return str(uuid.UUID(int=R.getrandbits(128), version=4))


def digits(n):
    return R.choice("123456789") + rs(n - 1, DIG)


WORDS = [
    "otter",
    "granite",
    "lantern",
    "maple",
    "cobalt",
    "thistle",
    "harbor",
    "saffron",
    "walrus",
    "quartz",
    "juniper",
    "falcon",
    "ember",
    "meadow",
    "pylon",
    "tundra",
    "cactus",
    "orbit",
    "velvet",
    "nectar",
    "bramble",
    "comet",
    "marble",
    "glacier",
    "pepper",
    "sparrow",
    "willow",
    "zephyr",
]
SYM = "!#%*-_.@+"


def pw():
    """human-ish password: two words, digits, a symbol, mixed case"""
    a, b = R.sample(WORDS, 2)
    style = R.randrange(4)
    if style == 0:
        return a.capitalize() + R.choice(SYM) + b + digits(R.choice([2, 3, 4]))
    if style == 1:
        return rs(R.randint(14, 20), ALNUM + "!#%*")
    if style == 2:
        return b.capitalize() + digits(2) + R.choice(SYM) + a.upper()[:3] + rs(4)
    return rs(6) + R.choice("!#%*") + rs(6) + R.choice("-_.") + rs(4)


def pwu():
    """url-safe password"""
    return (
        rs(R.randint(16, 22), ALNUM + "-_.~")
        if R.random() < 0.5
        else R.choice(WORDS).capitalize() + "-" + rs(6) + "-" + digits(4)
    )


def pw_alnum(n=18):
    return rs(n)


USERS = [
    "mkowalski",
    "aokafor",
    "jlindqvist",
    "tnguyen",
    "rpatel",
    "sbecker",
    "ydubois",
    "kfernandes",
    "lmarchetti",
    "hsato",
    "dosei",
    "emurphy",
    "pvasquez",
    "zhu.wei",
    "noura.h",
    "ivanov.a",
    "cgarcia",
    "fbakker",
]
HOSTS = [
    "db-prod-2.int.acme.io",
    "pg.staging.lakehouse.net",
    "10.20.4.17",
    "mysql-ro.eu-west-1.acmecorp.internal",
    "ledger-db.svc.cluster.local",
    "warehouse.prod.kestrel.dev",
    "192.168.40.12",
    "mq.ops.borealis.app",
    "sql01.corp.northwind.local",
    "redis-cache.kv.acme.io",
]
ORGS = [
    "acme",
    "kestrel",
    "northwind",
    "borealis",
    "lakehouse",
    "tidepool",
    "quillsoft",
    "ferrous",
    "bluefinch",
    "orchardly",
]


def user():
    return R.choice(USERS)


def host():
    return R.choice(HOSTS)


def org():
    return R.choice(ORGS)


def ip():
    return "10.%d.%d.%d" % (R.randint(0, 255), R.randint(0, 255), R.randint(2, 254))


def ts():
    return "2025-%02d-%02dT%02d:%02d:%02dZ" % (
        R.randint(1, 12),
        R.randint(1, 28),
        R.randint(0, 23),
        R.randint(0, 59),
        R.randint(0, 59),
    )


def sha40():
    return hx(40)


# --------------------------------------------------------------------------
# checksummed / encoded formats
# --------------------------------------------------------------------------
B62 = DIG + UP + LOW


def base62(n, width):
    out = ""
    while n:
        n, r = divmod(n, 62)
        out = B62[r] + out
    return out.rjust(width, "0")


def crc_token(prefix):
    """GitHub / npm style: prefix + 30 random base62 + 6-char base62 CRC32"""
    body = rs(30)
    return prefix + body + base62(zlib.crc32(body.encode()) & 0xFFFFFFFF, 6)


BECH = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def _polymod(values):
    gen = [0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3]
    chk = 1
    for v in values:
        b = chk >> 25
        chk = ((chk & 0x1FFFFFF) << 5) ^ v
        for i in range(5):
            chk ^= gen[i] if ((b >> i) & 1) else 0
    return chk


def _hrp_expand(hrp):
    return [ord(x) >> 5 for x in hrp] + [0] + [ord(x) & 31 for x in hrp]


def _convertbits(data, frm, to):
    acc = bits = 0
    ret = []
    maxv = (1 << to) - 1
    for v in data:
        acc = (acc << frm) | v
        bits += frm
        while bits >= to:
            bits -= to
            ret.append((acc >> bits) & maxv)
    if bits:
        ret.append((acc << (to - bits)) & maxv)
    return ret


def bech32(hrp, data_bytes):
    data = _convertbits(data_bytes, 8, 5)
    pm = _polymod(_hrp_expand(hrp) + data + [0] * 6) ^ 1
    chk = [(pm >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(BECH[d] for d in data + chk)


B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def b58check(payload):
    raw = payload + hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4]
    n = int.from_bytes(raw, "big")
    out = ""
    while n:
        n, r = divmod(n, 58)
        out = B58[r] + out
    pad = len(raw) - len(raw.lstrip(b"\0"))
    return "1" * pad + out


def wif():
    return b58check(b"\x80" + rbytes(32) + b"\x01")


def jwt(payload, sig_bytes=32):
    enc = lambda d: (
        base64.urlsafe_b64encode(json.dumps(d, separators=(",", ":")).encode()).decode().rstrip("=")
    )
    return (
        enc({"alg": "HS256", "typ": "JWT"})
        + "."
        + enc(payload)
        + "."
        + base64.urlsafe_b64encode(rbytes(sig_bytes)).decode().rstrip("=")
    )


def b64json(d):
    return base64.b64encode(json.dumps(d, separators=(",", ":")).encode()).decode()


def pem_body(nbytes, width=64):
    s = base64.b64encode(rbytes(nbytes)).decode()
    return "\n".join(s[i : i + width] for i in range(0, len(s), width))


# --------------------------------------------------------------------------
# vendor token formats (all fake)
# --------------------------------------------------------------------------
def t_openai_proj():
    return "sk-proj-" + rs(74, B64URL) + "T3BlbkFJ" + rs(74, B64URL)


def t_anthropic_oat():
    return "sk-ant-oat01-" + rs(93, B64URL) + "AA"


def t_anthropic_api():
    return "sk-ant-api03-" + rs(93, B64URL) + "AA"


def t_azure_client_secret():
    return rs(3, ALNUM) + "8Q~" + rs(34, ALNUM + "_~.-")


def t_atlassian():
    return "ATATT3xFfGF0" + rs(170, B64URL) + "=" + rs(8, "0123456789ABCDEF")


def t_sentry_org():
    return (
        "sntrys_"
        + b64json(
            {
                "iat": R.randint(1.70e9, 1.75e9),
                "url": "https://sentry.io",
                "region_url": "https://de.sentry.io",
                "org": org(),
            }
        ).rstrip("=")
        + "_"
        + rs(43, B64URL)
    )


def t_grafana_cloud():
    return "glc_" + b64json(
        {
            "o": digits(6),
            "n": "stack-%s-hm-read" % digits(6),
            "k": rs(24),
            "m": {"r": "prod-eu-west-2"},
        }
    )


def t_onepassword_sa():
    return "ops_" + b64json(
        {
            "signInAddress": "my.1password.eu",
            "userAuth": {
                "method": "SRPg-4096",
                "alg": "PBES2g-HS256",
                "iterations": 650000,
                "salt": rs(22, B64URL),
            },
            "email": rs(14, LOW) + "@1passwordserviceaccounts.eu",
            "srpX": hx(64),
            "muk": {
                "alg": "A256GCM",
                "ext": True,
                "k": rs(43, B64URL),
                "key_ops": ["encrypt", "decrypt"],
                "kty": "oct",
                "kid": "mp",
            },
            "secretKey": "A3-" + rs(6, UP + DIG) + "-" + rs(6, UP + DIG),
        }
    ).rstrip("=")


def t_pypi():
    return "pypi-AgEIcHlwaS5vcmcCJD" + rs(150, B64URL)


def t_slack_bot():
    return "xoxb-%s-%s-%s" % (digits(12), digits(13), rs(24))


def t_slack_config_refresh():
    return "xoxe-1-" + rs(140, ALNUM)


def t_tailscale_auth():
    return "tskey-auth-k" + rs(16) + "CNTRL-" + rs(32)


def t_age():
    return bech32("age-secret-key-", rbytes(32)).upper()


def t_nsec():
    return bech32("nsec", rbytes(32))


def t_do():
    return "dop_v1_" + hx(64)


VENDORS = [
    # key, VAR, label, generator
    ("github_classic_pat", "GITHUB_TOKEN", "GitHub", lambda: crc_token("ghp_")),
    ("github_oauth_gho", "GH_TOKEN", "GitHub CLI", lambda: crc_token("gho_")),
    (
        "github_app_installation_ghs",
        "GH_INSTALLATION_TOKEN",
        "GitHub App",
        lambda: crc_token("ghs_"),
    ),
    (
        "github_fine_grained",
        "GH_PAT",
        "GitHub",
        lambda: "github_pat_11" + rs(20, UP + DIG) + "_" + rs(59),
    ),
    ("npm_publish_token", "NPM_TOKEN", "npm", lambda: crc_token("npm_")),
    ("gitlab_pat_glpat", "GITLAB_TOKEN", "GitLab", lambda: "glpat-" + rs(20, B64URL)),
    (
        "gitlab_deploy_gldt",
        "CI_DEPLOY_PASSWORD",
        "GitLab deploy token",
        lambda: "gldt-" + rs(20, B64URL),
    ),
    ("gitlab_runner_glrt", "RUNNER_TOKEN", "GitLab runner", lambda: "glrt-" + rs(20, B64URL)),
    ("openai_project_key", "OPENAI_API_KEY", "OpenAI", t_openai_proj),
    ("anthropic_oauth_oat01", "CLAUDE_CODE_OAUTH_TOKEN", "Claude", t_anthropic_oat),
    ("anthropic_api03", "ANTHROPIC_API_KEY", "Anthropic", t_anthropic_api),
    ("huggingface_hf", "HF_TOKEN", "Hugging Face", lambda: "hf_" + rs(34, LOW + UP)),
    ("groq_gsk", "GROQ_API_KEY", "Groq", lambda: "gsk_" + rs(52)),
    ("openrouter_v1", "OPENROUTER_API_KEY", "OpenRouter", lambda: "sk-or-v1-" + hx(64)),
    (
        "langsmith_lsv2",
        "LANGSMITH_API_KEY",
        "LangSmith",
        lambda: "lsv2_pt_" + hx(32) + "_" + hx(10),
    ),
    ("pinecone_pcsk", "PINECONE_API_KEY", "Pinecone", lambda: "pcsk_" + rs(5) + "_" + rs(62)),
    ("perplexity_pplx", "PPLX_API_KEY", "Perplexity", lambda: "pplx-" + rs(48)),
    ("xai_grok", "XAI_API_KEY", "xAI", lambda: "xai-" + rs(80)),
    ("stripe_secret_live", "STRIPE_SECRET_KEY", "Stripe", lambda: "sk_live_51" + rs(22) + rs(75)),
    ("stripe_restricted_live", "STRIPE_API_KEY", "Stripe", lambda: "rk_live_51" + rs(22) + rs(75)),
    ("stripe_webhook_whsec", "STRIPE_WEBHOOK_SECRET", "Stripe", lambda: "whsec_" + rs(32)),
    ("slack_bot_xoxb", "SLACK_BOT_TOKEN", "Slack", t_slack_bot),
    ("slack_config_refresh_xoxe", "SLACK_CONFIG_REFRESH_TOKEN", "Slack", t_slack_config_refresh),
    ("aws_access_key_pair", "AWS_SECRET_ACCESS_KEY", "AWS", None),  # special
    ("google_api_aiza", "GOOGLE_API_KEY", "Google", lambda: "AIza" + rs(35, B64URL)),
    (
        "google_oauth_gocspx",
        "GOOGLE_CLIENT_SECRET",
        "Google OAuth",
        lambda: "GOCSPX-" + rs(28, B64URL),
    ),
    ("azure_ad_client_secret_8q", "AZURE_CLIENT_SECRET", "Entra ID", t_azure_client_secret),
    (
        "sendgrid_sg",
        "SENDGRID_API_KEY",
        "SendGrid",
        lambda: "SG." + rs(22, B64URL) + "." + rs(43, B64URL),
    ),
    ("shopify_shpat", "SHOPIFY_ACCESS_TOKEN", "Shopify", lambda: "shpat_" + hx(32)),
    ("shopify_shpss", "SHOPIFY_API_SECRET", "Shopify", lambda: "shpss_" + hx(32)),
    ("mailgun_key", "MAILGUN_API_KEY", "Mailgun", lambda: hx(32) + "-" + hx(8) + "-" + hx(8)),
    ("twilio_sk_pair", "TWILIO_API_SECRET", "Twilio", None),  # special
    ("doppler_personal_dp_pt", "DOPPLER_TOKEN", "Doppler", lambda: "dp.pt." + rs(43)),
    (
        "vault_hvs",
        "VAULT_TOKEN",
        "Vault",
        lambda: "hvs." + rs(24) if R.random() < 0.3 else "hvs.CAES" + rs(86, B64URL),
    ),
    (
        "terraform_cloud_atlasv1",
        "TF_TOKEN_app_terraform_io",
        "Terraform Cloud",
        lambda: rs(14) + ".atlasv1." + rs(67),
    ),
    ("pulumi_pul", "PULUMI_ACCESS_TOKEN", "Pulumi", lambda: "pul-" + hx(40)),
    ("netlify_nfp", "NETLIFY_AUTH_TOKEN", "Netlify", lambda: "nfp_" + rs(36)),
    ("digitalocean_dop_v1", "DIGITALOCEAN_ACCESS_TOKEN", "DigitalOcean", t_do),
    ("dockerhub_dckr_pat", "DOCKERHUB_TOKEN", "Docker Hub", lambda: "dckr_pat_" + rs(27, B64URL)),
    ("sentry_org_sntrys", "SENTRY_AUTH_TOKEN", "Sentry", t_sentry_org),
    ("grafana_sa_glsa", "GRAFANA_SA_TOKEN", "Grafana", lambda: "glsa_" + rs(32) + "_" + hx(8)),
    ("grafana_cloud_glc", "GRAFANA_CLOUD_TOKEN", "Grafana Cloud", t_grafana_cloud),
    ("newrelic_nrak", "NEW_RELIC_API_KEY", "New Relic", lambda: "NRAK-" + rs(27, UP + DIG)),
    (
        "dynatrace_dt0c01",
        "DT_API_TOKEN",
        "Dynatrace",
        lambda: "dt0c01." + rs(24, UP + DIG) + "." + rs(64, UP + DIG),
    ),
    ("buildkite_bkua", "BUILDKITE_API_TOKEN", "Buildkite", lambda: "bkua_" + hx(40)),
    ("sonarqube_squ", "SONAR_TOKEN", "SonarQube", lambda: "squ_" + hx(40)),
    ("postman_pmak", "POSTMAN_API_KEY", "Postman", lambda: "PMAK-" + hx(24) + "-" + hx(34)),
    ("linear_lin_api", "LINEAR_API_KEY", "Linear", lambda: "lin_api_" + rs(40)),
    ("notion_ntn", "NOTION_TOKEN", "Notion", lambda: "ntn_" + rs(11, DIG) + rs(35)),
    ("figma_figd", "FIGMA_TOKEN", "Figma", lambda: "figd_" + rs(40, B64URL)),
    ("airtable_pat", "AIRTABLE_TOKEN", "Airtable", lambda: "pat" + rs(14) + "." + hx(64)),
    ("atlassian_atatt", "JIRA_API_TOKEN", "Atlassian", t_atlassian),
    (
        "contentful_cfpat",
        "CONTENTFUL_MANAGEMENT_TOKEN",
        "Contentful",
        lambda: "CFPAT-" + rs(43, B64URL),
    ),
    ("square_eaaa", "SQUARE_ACCESS_TOKEN", "Square", lambda: "EAAA" + rs(60, B64URL)),
    ("paystack_sk_live", "PAYSTACK_SECRET_KEY", "Paystack", lambda: "sk_live_" + hx(40)),
    ("mollie_live", "MOLLIE_API_KEY", "Mollie", lambda: "live_" + rs(30)),
    ("shippo_live", "SHIPPO_API_TOKEN", "Shippo", lambda: "shippo_live_" + hx(40)),
    ("databricks_dapi", "DATABRICKS_TOKEN", "Databricks", lambda: "dapi" + hx(32) + "-2"),
    ("prefect_pnu", "PREFECT_API_KEY", "Prefect", lambda: "pnu_" + rs(36)),
    ("supabase_sbp", "SUPABASE_ACCESS_TOKEN", "Supabase", lambda: "sbp_" + hx(40)),
    (
        "planetscale_pscale_pw",
        "DATABASE_PASSWORD",
        "PlanetScale",
        lambda: "pscale_pw_" + rs(43, B64URL),
    ),
    ("render_rnd", "RENDER_API_KEY", "Render", lambda: "rnd_" + rs(32)),
    ("tailscale_auth_key", "TS_AUTHKEY", "Tailscale", t_tailscale_auth),
    ("onepassword_ops", "OP_SERVICE_ACCOUNT_TOKEN", "1Password", t_onepassword_sa),
    ("pypi_upload_token", "TWINE_PASSWORD", "PyPI", t_pypi),
    ("rubygems_api", "GEM_HOST_API_KEY", "RubyGems", lambda: "rubygems_" + hx(48)),
    ("nuget_oy2", "NUGET_API_KEY", "NuGet", lambda: "oy2" + rs(43, LOW + DIG)),
    ("clojars_deploy", "CLOJARS_PASSWORD", "Clojars", lambda: "CLOJARS_" + hx(60)),
    ("age_identity", "SOPS_AGE_KEY", "age", t_age),
    ("nostr_nsec", "NOSTR_SECRET_KEY", "Nostr", t_nsec),
    ("bitcoin_wif", "HOT_WALLET_WIF", "Bitcoin", wif),
    ("telegram_bot", "TELEGRAM_BOT_TOKEN", "Telegram", lambda: digits(10) + ":AA" + rs(33, B64URL)),
    (
        "discord_bot",
        "DISCORD_TOKEN",
        "Discord",
        lambda: (
            base64.b64encode(digits(19).encode()).decode().rstrip("=")
            + "."
            + rs(6, B64URL)
            + "."
            + rs(38, B64URL)
        ),
    ),
    (
        "mapbox_secret_sk",
        "MAPBOX_DOWNLOADS_TOKEN",
        "Mapbox",
        lambda: "sk.eyJ1Ijoi" + rs(40, B64URL) + "." + rs(22, B64URL),
    ),
    ("launchdarkly_sdk", "LD_SDK_KEY", "LaunchDarkly", lambda: "sdk-" + ruuid()),
    ("posthog_phx", "POSTHOG_PERSONAL_API_KEY", "PostHog", lambda: "phx_" + rs(47)),
    ("hubspot_pat_na1", "HUBSPOT_ACCESS_TOKEN", "HubSpot", lambda: "pat-na1-" + ruuid()),
    ("heroku_hrku", "HEROKU_API_KEY", "Heroku", lambda: "HRKU-AA" + rs(58, B64URL)),
    ("ngrok_cr", "NGROK_AUTHTOKEN", "ngrok", lambda: "2" + rs(26) + "_" + rs(21)),
    (
        "google_oauth_refresh_1slash",
        "GOOGLE_REFRESH_TOKEN",
        "Google",
        lambda: "1//0" + rs(2) + rs(96, B64URL),
    ),
    ("google_access_ya29", "GOOGLE_ACCESS_TOKEN", "Google", lambda: "ya29.a0A" + rs(160, B64URL)),
    ("jfrog_reference_token", "ARTIFACTORY_TOKEN", "JFrog", lambda: "cmVmdGtuOjAxOjE3" + rs(48)),
    ("alibaba_ltai_pair", "ALIBABA_CLOUD_ACCESS_KEY_SECRET", "Alibaba Cloud", None),  # special
    ("modal_token_pair", "MODAL_TOKEN_SECRET", "Modal", None),  # special
]


# --------------------------------------------------------------------------
# carrier contexts for vendor tokens: f(S, VAR, label) -> text
# --------------------------------------------------------------------------
def _lc(v):
    return v.lower()


CARRIERS = {
    "mise_toml_env_table": lambda S, V, L: (
        '# .mise.toml\n[tools]\nnode = "22.11"\npython = "3.12"\n\n[env]\nNODE_ENV = "development"\n%s = "%s"\n'
        % (V, S)
    ),
    "pm2_ecosystem_env_production": lambda S, V, L: (
        "module.exports = {\n  apps: [{\n    name: 'sync-worker',\n    script: 'dist/worker.js',\n    instances: 2,\n    env_production: {\n      NODE_ENV: 'production',\n      %s: '%s',\n    },\n  }],\n};"
        % (V, S)
    ),
    "supervisord_program_environment_line": lambda S, V, L: (
        '[program:ingest]\ncommand=/srv/ingest/.venv/bin/python -m ingest.worker\nautorestart=true\nenvironment=PYTHONUNBUFFERED="1",%s="%s"\nstdout_logfile=/var/log/ingest.out.log'
        % (V, S)
    ),
    "crontab_inline_env_prefix": lambda S, V, L: (
        "$ crontab -l\nMAILTO=ops@%s.io\n# nightly export (%s)\n17 3 * * * %s=%s /opt/export/run.sh >> /var/log/export.log 2>&1"
        % (org(), L, V, S)
    ),
    "launchd_plist_environment_variables": lambda S, V, L: (
        '<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0">\n<dict>\n  <key>Label</key>\n  <string>io.%s.menubar-sync</string>\n  <key>EnvironmentVariables</key>\n  <dict>\n    <key>%s</key>\n    <string>%s</string>\n  </dict>\n  <key>RunAtLoad</key>\n  <true/>\n</dict>\n</plist>'
        % (org(), V, S)
    ),
    "windows_setx_cmd_transcript": lambda S, V, L: (
        'C:\\Users\\%s> setx %s "%s"\n\nSUCCESS: Specified value was saved.\n\nC:\\Users\\%s> '
        % (user(), V, S, user())
    ),
    "powershell_profile_env_assignment": lambda S, V, L: (
        '# Microsoft.PowerShell_profile.ps1\nSet-PSReadLineOption -EditMode Emacs\nImport-Module posh-git\n$env:%s = "%s"\n$env:PATH += ";C:\\tools\\bin"'
        % (V, S)
    ),
    "fish_config_set_gx": lambda S, V, L: (
        "# ~/.config/fish/config.fish\nif status is-interactive\n    set -gx EDITOR nvim\n    set -gx %s %s\n    starship init fish | source\nend"
        % (V, S)
    ),
    "nushell_env_nu_assignment": lambda S, V, L: (
        "# env.nu\n$env.EDITOR = 'hx'\n$env.%s = '%s'\n$env.PATH = ($env.PATH | split row (char esep) | prepend '~/.cargo/bin')"
        % (V, S)
    ),
    "zsh_extended_history_entry": lambda S, V, L: (
        ": 1718%06d:0;cd ~/src/%s-api\n: 1718%06d:0;export %s=%s\n: 1718%06d:3;make integration"
        % (R.randint(0, 999999), org(), R.randint(0, 999999), V, S, R.randint(0, 999999))
    ),
    "vscode_terminal_integrated_env": lambda S, V, L: (
        '// .vscode/settings.json\n{\n  "editor.formatOnSave": true,\n  "terminal.integrated.env.linux": {\n    "%s": "%s"\n  },\n  "python.testing.pytestEnabled": true\n}'
        % (V, S)
    ),
    "jetbrains_run_configuration_envs_xml": lambda S, V, L: (
        '<component name="ProjectRunConfigurationManager">\n  <configuration default="false" name="api (dev)" type="PythonConfigurationType">\n    <envs>\n      <env name="PYTHONUNBUFFERED" value="1" />\n      <env name="%s" value="%s" />\n    </envs>\n  </configuration>\n</component>'
        % (V, S)
    ),
    "gha_run_log_env_block_unmasked": lambda S, V, L: (
        lambda t: (
            "%s.1234567Z ##[group]Run ./scripts/release.sh\n%s.1235012Z ./scripts/release.sh\n  shell: /usr/bin/bash -e {0}\n  env:\n    %s: %s\n    RELEASE_CHANNEL: beta\n##[endgroup]"
            % (t, t, V, S)
        )
    )(ts()[:-1]),
    "k8s_configmap_data_misuse": lambda S, V, L: (
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: api-env\n  namespace: prod\ndata:\n  LOG_LEVEL: info\n  %s: "%s"'
        % (V, S)
    ),
    "helm_upgrade_set_string_history": lambda S, V, L: (
        "helm upgrade --install api ./charts/api -n prod --set image.tag=v2.%d.%d --set-string env.%s=%s"
        % (R.randint(1, 40), R.randint(0, 9), V, S)
    ),
    "compose_override_environment_list": lambda S, V, L: (
        "# docker-compose.override.yml\nservices:\n  worker:\n    environment:\n      - LOG_LEVEL=debug\n      - %s=%s\n    volumes:\n      - ./src:/app/src"
        % (V, S)
    ),
    "gcloud_run_deploy_set_env_vars": lambda S, V, L: (
        "gcloud run deploy api --image europe-docker.pkg.dev/%s-prod/api/api:%s --region europe-west1 --set-env-vars LOG_LEVEL=info,%s=%s"
        % (org(), hx(7), V, S)
    ),
    "aws_lambda_update_environment_variables": lambda S, V, L: (
        'aws lambda update-function-configuration --function-name %s-webhook --environment "Variables={STAGE=prod,%s=%s}"'
        % (org(), V, S)
    ),
    "az_webapp_appsettings_set": lambda S, V, L: (
        "az webapp config appsettings set -g rg-%s-prod -n %s-api --settings WEBSITES_PORT=8080 %s=%s"
        % (org(), org(), V, S)
    ),
    "ssm_put_parameter_type_string": lambda S, V, L: (
        "aws ssm put-parameter --name /prod/api/%s --type String --overwrite --value '%s'"
        % (_lc(V), S)
    ),
    "python_os_environ_setdefault": lambda S, V, L: (
        'import os\n\n# TODO: remove before merging\nos.environ.setdefault("%s", "%s")\n\nfrom app.main import create_app\napp = create_app()'
        % (V, S)
    ),
    "java_system_setproperty_static_block": lambda S, V, L: (
        'public class IntegrationBase {\n    static {\n        System.setProperty("%s", "%s");\n    }\n}'
        % (_lc(V).replace("_", "."), S)
    ),
    "go_test_t_setenv": lambda S, V, L: (
        'func TestClientSmoke(t *testing.T) {\n\tt.Setenv("%s", "%s")\n\tc := client.NewFromEnv()\n\trequire.NoError(t, c.Ping(context.Background()))\n}'
        % (V, S)
    ),
    "rust_env_set_var_in_main": lambda S, V, L: (
        'fn main() -> anyhow::Result<()> {\n    // quick local hack, see #%d\n    std::env::set_var("%s", "%s");\n    let cfg = Config::from_env()?;\n    run(cfg)\n}'
        % (R.randint(100, 999), V, S)
    ),
    "csharp_environment_setenvironmentvariable": lambda S, V, L: (
        'Environment.SetEnvironmentVariable("%s", "%s");\nvar builder = WebApplication.CreateBuilder(args);'
        % (V, S)
    ),
    "ruby_env_fetch_default_literal": lambda S, V, L: (
        '# config/initializers/%s.rb\n%s_KEY = ENV.fetch("%s", "%s")'
        % (_lc(L).replace(" ", "_"), L.upper().replace(" ", "_"), V, S)
    ),
    "php_putenv_bootstrap": lambda S, V, L: (
        "<?php\n// bootstrap/local.php\nputenv('%s=%s');\nrequire __DIR__ . '/../vendor/autoload.php';"
        % (V, S)
    ),
    "typescript_nullish_env_fallback": lambda S, V, L: (
        'const apiKey = process.env.%s ?? "%s";\nexport const client = createClient({ apiKey });'
        % (V, S)
    ),
    "git_log_p_env_staging_diff": lambda S, V, L: (
        "commit %s\nAuthor: %s <%s@%s.io>\n\n    chore: staging env\n\ndiff --git a/.env.staging b/.env.staging\n--- a/.env.staging\n+++ b/.env.staging\n@@ -3,3 +3,4 @@ APP_ENV=staging\n LOG_LEVEL=debug\n+%s=%s\n"
        % (sha40(), user(), user(), org(), V, S)
    ),
    "github_issue_comment_quoted_env": lambda S, V, L: (
        "> ```\n> %s=%s\n> ```\n\n@%s heads-up: this is a live %s credential in a public issue. I've hidden the comment, please rotate it."
        % (V, S, user(), L)
    ),
    "slack_export_message_json": lambda S, V, L: (
        '{"type": "message", "user": "U0%s", "text": "staging %s key for the demo: `%s` (don\'t share outside the channel)", "ts": "17182%05d.%06d"}'
        % (rs(8, UP + DIG), L, S, R.randint(0, 99999), R.randint(0, 999999))
    ),
    "sqlite_settings_insert_dump": lambda S, V, L: (
        "$ sqlite3 app.db .dump | grep settings\nCREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT);\nINSERT INTO settings VALUES('%s','%s');"
        % (_lc(V), S)
    ),
    "redis_monitor_set_command": lambda S, V, L: (
        '1718%06d.%06d [0 %s:51822] "SET" "cfg:%s" "%s"'
        % (R.randint(0, 999999), R.randint(0, 999999), ip(), _lc(V), S)
    ),
    "strace_execve_argv_header": lambda S, V, L: (
        'execve("/usr/bin/curl", ["curl", "-sS", "-H", "Authorization: Bearer %s", "https://api.%s.io/v1/sync"], 0x7ffd%s /* 31 vars */) = 0'
        % (S, org(), hx(8))
    ),
    "proc_environ_tr_nul_output": lambda S, V, L: (
        "$ sudo cat /proc/$(pgrep -f gunicorn | head -1)/environ | tr '\\0' '\\n'\nPATH=/usr/local/bin:/usr/bin\nHOSTNAME=api-7c9f%s\n%s=%s\nPYTHONUNBUFFERED=1"
        % (hx(4), V, S)
    ),
    "pulumi_stack_yaml_plain_config": lambda S, V, L: (
        '# Pulumi.prod.yaml\nconfig:\n  aws:region: eu-central-1\n  api:%s: %s\n  api:replicas: "3"'
        % (_lc(V).replace("_", "-"), S)
    ),
    "agent_session_shell_tool_output": lambda S, V, L: (
        'Tool call: bash("env | grep -i %s")\nOutput:\n%s=%s\n\nThe variable is set, so the 401 must come from the scope of the key rather than a missing env var.'
        % (V.split("_")[0].lower(), V, S)
    ),
    "terraform_tfvars_json_literal": lambda S, V, L: (
        '{\n  "region": "eu-west-1",\n  "%s": "%s",\n  "replicas": 2\n}' % (_lc(V), S)
    ),
}
CARRIER_NAMES = list(CARRIERS)


def provider_samples():
    out = []
    order = CARRIER_NAMES[:]
    R.shuffle(order)
    ci = 0
    for i, (key, var, label, gen) in enumerate(VENDORS):
        if gen is None:
            continue
        n = 2 if i % 3 == 0 else 1
        for _ in range(n):
            cname = order[ci % len(order)]
            ci += 1
            S = gen()
            out.append(
                dict(
                    kind="%s_%s" % (key, cname),
                    text=CARRIERS[cname](S, var, label),
                    secret=S,
                    shape="provider",
                )
            )
    return out


# --------------------------------------------------------------------------
# hand-written templates: (kind, shape, value generator, template)
# markers: ⟦S⟧ secret, ⟦USER⟧ ⟦HOST⟧ ⟦IP⟧ ⟦ORG⟧ ⟦TS⟧ ⟦SHA⟧ ⟦N⟧ ⟦HEX8⟧
# --------------------------------------------------------------------------
def fill(t, S):
    reps = {
        "⟦S⟧": lambda: S,
        "⟦USER⟧": user,
        "⟦HOST⟧": host,
        "⟦IP⟧": ip,
        "⟦ORG⟧": org,
        "⟦TS⟧": ts,
        "⟦SHA⟧": sha40,
        "⟦N⟧": lambda: str(R.randint(100, 9999)),
        "⟦HEX8⟧": lambda: hx(8),
    }
    for k, f in reps.items():
        while k in t:
            t = t.replace(k, f(), 1)
    return t


G = {
    "pw": pw,
    "pwu": pwu,
    "aln": lambda: rs(24),
    "aln32": lambda: rs(32),
    "hex32": lambda: hx(32),
    "hex64": lambda: hx(64),
    "b64": lambda: b64n(32),
    "b6418": lambda: b64n(18),
    "pin6": lambda: digits(6),
    "pin8": lambda: digits(8),
    "uuid": ruuid,
}

CONFIGS = [
    (
        "haproxy_userlist_insecure_password",
        "pw",
        "userlist stats_users\n    user admin insecure-password ⟦S⟧\n    user ro    password $6$rounds=5000$⟦HEX8⟧$⟦HEX8⟧⟦HEX8⟧\n\nlisten stats\n    bind :8404\n    stats enable\n    acl auth_ok http_auth(stats_users)",
    ),
    (
        "icecast_xml_source_password",
        "pw",
        "<icecast>\n  <authentication>\n    <source-password>⟦S⟧</source-password>\n    <relay-password>hackme</relay-password>\n    <admin-user>admin</admin-user>\n  </authentication>\n</icecast>",
    ),
    (
        "minecraft_server_properties_rcon_password",
        "pw",
        "#Minecraft server properties\nenable-rcon=true\nrcon.port=25575\nrcon.password=⟦S⟧\nmotd=Friday night survival\nmax-players=12",
    ),
    (
        "murmur_ini_serverpassword",
        "pw",
        '; murmur.ini\ndatabase=/var/lib/mumble-server/mumble-server.sqlite\nwelcometext="Welcome to the raid server"\nport=64738\nserverpassword=⟦S⟧\nbandwidth=72000',
    ),
    (
        "gitea_app_ini_database_passwd",
        "pw",
        "[database]\nDB_TYPE  = postgres\nHOST     = ⟦HOST⟧:5432\nNAME     = gitea\nUSER     = gitea\nPASSWD   = `⟦S⟧`\nSSL_MODE = require",
    ),
    (
        "nextcloud_config_php_dbpassword",
        "pw",
        "<?php\n$CONFIG = array (\n  'instanceid' => 'oc⟦HEX8⟧',\n  'dbtype' => 'mysql',\n  'dbname' => 'nextcloud',\n  'dbhost' => 'localhost',\n  'dbuser' => 'ncadmin',\n  'dbpassword' => '⟦S⟧',\n  'installed' => true,\n);",
    ),
    (
        "mediawiki_localsettings_wgdbpassword",
        "pw",
        '## Database settings\n$wgDBtype = "mysql";\n$wgDBserver = "localhost";\n$wgDBname = "wiki_main";\n$wgDBuser = "wikiuser";\n$wgDBpassword = "⟦S⟧";',
    ),
    (
        "drupal_settings_php_databases_array",
        "pw",
        "$databases['default']['default'] = [\n  'database' => 'drupal10',\n  'username' => 'drupal',\n  'password' => '⟦S⟧',\n  'host' => '⟦HOST⟧',\n  'port' => '3306',\n  'driver' => 'mysql',\n];",
    ),
    (
        "magento_env_php_db_connection",
        "pw",
        "'db' => [\n    'table_prefix' => '',\n    'connection' => [\n        'default' => [\n            'host' => 'mysql',\n            'dbname' => 'magento',\n            'username' => 'magento',\n            'password' => '⟦S⟧',\n            'active' => '1'\n        ]\n    ]\n],",
    ),
    (
        "odoo_conf_admin_passwd_master",
        "pw",
        "[options]\naddons_path = /mnt/extra-addons\nadmin_passwd = ⟦S⟧\ndb_host = db\ndb_port = 5432\ndb_user = odoo\nlist_db = False",
    ),
    (
        "synapse_homeserver_registration_shared_secret",
        "aln32",
        'server_name: "matrix.⟦ORG⟧.chat"\npid_file: /data/homeserver.pid\nenable_registration: false\nregistration_shared_secret: "⟦S⟧"\nreport_stats: false',
    ),
    (
        "home_assistant_secrets_yaml_mqtt",
        "pw",
        "# secrets.yaml\nlatitude_home: 52.3702\nlongitude_home: 4.8952\nmqtt_user: homeassistant\nmqtt_password: ⟦S⟧\nunifi_host: 192.168.1.2",
    ),
    (
        "zabbix_server_conf_dbpassword",
        "pw",
        "LogFile=/var/log/zabbix/zabbix_server.log\nDBHost=⟦HOST⟧\nDBName=zabbix\nDBUser=zabbix\nDBPassword=⟦S⟧\nStartPollers=10",
    ),
    (
        "nagios_resource_cfg_user_macro",
        "pw",
        "# resource.cfg\n$USER1$=/usr/lib/nagios/plugins\n# MySQL monitoring account\n$USER3$=nagios_mon\n$USER4$=⟦S⟧",
    ),
    (
        "bacula_dir_conf_director_password",
        "aln32",
        'Director {\n  Name = backup-dir\n  DIRport = 9101\n  QueryFile = "/etc/bacula/scripts/query.sql"\n  Password = "⟦S⟧"\n  Messages = Daemon\n}',
    ),
    (
        "asterisk_manager_conf_ami_secret",
        "pw",
        "[general]\nenabled = yes\nport = 5038\nbindaddr = 127.0.0.1\n\n[crm-click2dial]\nsecret = ⟦S⟧\ndeny = 0.0.0.0/0.0.0.0\npermit = 10.0.0.0/255.0.0.0\nread = call,agent\nwrite = originate",
    ),
    (
        "freeradius_users_cleartext_password",
        "pw",
        '# /etc/freeradius/3.0/users\n⟦USER⟧  Cleartext-Password := "⟦S⟧"\n        Reply-Message := "Hello, %{User-Name}"\n\nDEFAULT Auth-Type := Reject',
    ),
    (
        "ppp_chap_secrets_line",
        "pw",
        '# Secrets for authentication using CHAP\n# client        server  secret                  IP addresses\nvpnuser-⟦N⟧   l2tpd   "⟦S⟧"   *',
    ),
    (
        "mikrotik_routeros_user_add_password",
        "pw",
        '/user add name=noc-backup group=read password="⟦S⟧" comment="oxidized"\n/ip service set ssh port=2222\n/ip service disable telnet,ftp,www',
    ),
    (
        "fortigate_config_system_admin_set_password",
        "pw",
        'config system admin\n    edit "netops"\n        set accprofile "super_admin"\n        set vdom "root"\n        set password ENC ⟦HEX8⟧\n    next\n    edit "api-backup"\n        set password "⟦S⟧"\n    next\nend',
    ),
    (
        "juniper_set_snmp_v3_authentication_password",
        "pw",
        'set snmp v3 usm local-engine user librenms authentication-sha authentication-password "⟦S⟧"\nset snmp v3 vacm security-to-group security-model usm security-name librenms group ro',
    ),
    (
        "pfsense_config_xml_ipsec_psk",
        "pw",
        "<ipsec>\n  <phase1>\n    <ikeid>3</ikeid>\n    <iketype>ikev2</iketype>\n    <remote-gateway>⟦IP⟧</remote-gateway>\n    <authentication_method>pre_shared_key</authentication_method>\n    <pre-shared-key>⟦S⟧</pre-shared-key>\n  </phase1>\n</ipsec>",
    ),
    (
        "unifi_system_properties_mongo_password",
        "aln",
        "## system.properties\nunifi.http.port=8080\ndb.mongo.local=false\ndb.mongo.uri=mongodb://unifi:⟦S⟧@mongo:27017/unifi?authSource=admin\nstatdb.mongo.uri=mongodb://unifi:⟦S⟧@mongo:27017/unifi_stat?authSource=admin",
    ),
    (
        "keycloak_conf_db_password",
        "pw",
        "# conf/keycloak.conf\ndb=postgres\ndb-username=keycloak\ndb-password=⟦S⟧\ndb-url=jdbc:postgresql://⟦HOST⟧/keycloak\nhostname=sso.⟦ORG⟧.io",
    ),
    (
        "superset_config_py_secret_key",
        "b64",
        "# superset_config.py\nROW_LIMIT = 5000\nSECRET_KEY = '⟦S⟧'\nSQLALCHEMY_DATABASE_URI = 'postgresql+psycopg2://superset@db/superset'\nWTF_CSRF_ENABLED = True",
    ),
    (
        "metabase_env_mb_db_pass",
        "pw",
        "MB_DB_TYPE=postgres\nMB_DB_DBNAME=metabase\nMB_DB_PORT=5432\nMB_DB_USER=metabase\nMB_DB_PASS=⟦S⟧\nMB_DB_HOST=⟦HOST⟧",
    ),
    (
        "mastodon_env_production_smtp_password",
        "pw",
        "LOCAL_DOMAIN=social.⟦ORG⟧.town\nSMTP_SERVER=smtp.eu.mailgun.org\nSMTP_PORT=587\nSMTP_LOGIN=postmaster@social.⟦ORG⟧.town\nSMTP_PASSWORD=⟦S⟧\nSMTP_FROM_ADDRESS=notifications@social.⟦ORG⟧.town",
    ),
    (
        "pgadmin_servers_json_password_field",
        "pw",
        '{\n  "Servers": {\n    "1": {\n      "Name": "prod replica",\n      "Group": "Servers",\n      "Host": "⟦HOST⟧",\n      "Port": 5432,\n      "Username": "readonly",\n      "Password": "⟦S⟧",\n      "SSLMode": "require"\n    }\n  }\n}',
    ),
    (
        "dbeaver_data_sources_json_plain_auth",
        "pw",
        '"postgres-jdbc-18f⟦HEX8⟧": {\n  "provider": "postgresql",\n  "driver": "postgres-jdbc",\n  "name": "analytics-prod",\n  "save-password": true,\n  "configuration": {\n    "host": "⟦HOST⟧",\n    "database": "analytics",\n    "auth-model": "native",\n    "user": "analyst",\n    "password": "⟦S⟧"\n  }\n}',
    ),
    (
        "tinyproxy_conf_basicauth",
        "pw",
        "Port 8888\nListen 0.0.0.0\nTimeout 600\nBasicAuth proxyuser ⟦S⟧\nAllow 10.0.0.0/8",
    ),
    (
        "nix_services_grafana_admin_password_literal",
        "pw",
        'services.grafana = {\n  enable = true;\n  settings.server.http_port = 3000;\n  settings.security.admin_user = "admin";\n  settings.security.admin_password = "⟦S⟧";\n};',
    ),
    (
        "dhall_record_database_password",
        "pw",
        'let Db = { host : Text, user : Text, password : Text }\n\nin  { db = { host = "⟦HOST⟧", user = "svc_reports", password = "⟦S⟧" } : Db\n    , workers = 4\n    }',
    ),
    (
        "ron_rust_config_password_field",
        "pw",
        '// config.ron\n(\n    listen: "0.0.0.0:7070",\n    database: (\n        url: "postgres://svc@⟦HOST⟧/ledger",\n        password: "⟦S⟧",\n    ),\n)',
    ),
    (
        "kdl_zellij_like_plugin_config_token",
        "aln32",
        'plugins {\n    remote-sync location="file:~/.zellij/plugins/remote_sync.wasm" {\n        endpoint "https://sync.⟦ORG⟧.dev"\n        auth-token "⟦S⟧"\n    }\n}',
    ),
    (
        "hocon_akka_persistence_jdbc_password",
        "pw",
        'slick {\n  profile = "slick.jdbc.PostgresProfile$"\n  db {\n    url = "jdbc:postgresql://⟦HOST⟧:5432/events"\n    user = "akka"\n    password = "⟦S⟧"\n    numThreads = 5\n  }\n}',
    ),
    (
        "apple_pkl_amends_password",
        "pw",
        'amends "package://pkg.pkl-lang.org/pkl-pantry/k8s.contrib@1.0.1#/AppEnvCluster.pkl"\n\ndatabase {\n  username = "orders"\n  password = "⟦S⟧"\n}',
    ),
    (
        "caddy_json_admin_http_basic_plain_comment",
        "pw",
        '{\n  "handler": "authentication",\n  "providers": {\n    "http_basic": {\n      "accounts": [{\n        "username": "grafana",\n        "password": "JDJhJDE0JE..."\n      }]\n    }\n  }\n}\n// plaintext for the hash above (remove!): ⟦S⟧',
    ),
    (
        "influxdb_v1_config_toml_shared_secret",
        "aln32",
        '[http]\n  enabled = true\n  bind-address = ":8086"\n  auth-enabled = true\n  shared-secret = "⟦S⟧"',
    ),
    (
        "kafka_connect_jdbc_connector_json_password",
        "pw",
        '{\n  "name": "orders-sink",\n  "config": {\n    "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector",\n    "connection.url": "jdbc:postgresql://⟦HOST⟧:5432/orders",\n    "connection.user": "kconnect",\n    "connection.password": "⟦S⟧",\n    "topics": "orders.v1"\n  }\n}',
    ),
    (
        "debezium_mysql_connector_database_password",
        "pw",
        'curl -s -X POST -H \'Content-Type: application/json\' localhost:8083/connectors -d \'{"name":"inventory","config":{"connector.class":"io.debezium.connector.mysql.MySqlConnector","database.hostname":"mysql","database.user":"debezium","database.password":"⟦S⟧","topic.prefix":"inv"}}\'',
    ),
    (
        "airflow_cfg_smtp_password",
        "pw",
        "[smtp]\nsmtp_host = smtp.office365.com\nsmtp_starttls = True\nsmtp_user = airflow-alerts@⟦ORG⟧.com\nsmtp_password = ⟦S⟧\nsmtp_port = 587",
    ),
    (
        "php_fpm_pool_env_directive_secret",
        "pw",
        "[www]\nuser = www-data\nlisten = /run/php/php8.2-fpm.sock\nenv[APP_ENV] = production\nenv[DB_PASSWORD] = ⟦S⟧\nclear_env = no",
    ),
    (
        "wireless_hostapd_wpa_psk_file_line",
        "hex64",
        "# /etc/hostapd.wpa_psk\n00:00:00:00:00:00 ⟦S⟧",
    ),
    (
        "chrony_keys_file_sha1_key",
        "hex32",
        "# /etc/chrony.keys\n# used by the ntp peers in rack 4\n10 SHA1 HEX:⟦S⟧",
    ),
    (
        "nsd_conf_tsig_secret_xfr",
        "b64",
        'key:\n    name: "xfr.⟦ORG⟧.net"\n    algorithm: hmac-sha256\n    secret: "⟦S⟧"\n\nzone:\n    name: ⟦ORG⟧.net\n    provide-xfr: 203.0.113.53 xfr.⟦ORG⟧.net',
    ),
    (
        "drbd_resource_shared_secret",
        "pw",
        'resource r0 {\n  net {\n    cram-hmac-alg sha1;\n    shared-secret "⟦S⟧";\n  }\n  on node-a { address 10.1.1.1:7789; }\n}',
    ),
    (
        "corosync_totem_authkey_hint_plus_pcs_password",
        "pw",
        "# pcs cluster setup notes\npcs host auth node1 node2 -u hacluster -p '⟦S⟧'\npcs cluster setup web_cluster node1 node2 --start --enable",
    ),
    (
        "samba_smb_conf_ldap_admin_dn_secret_note",
        "pw",
        "[global]\n   passdb backend = ldapsam:ldap://ldap.⟦ORG⟧.lan\n   ldap admin dn = cn=samba,ou=svc,dc=⟦ORG⟧,dc=lan\n   ; stored with: smbpasswd -w ⟦S⟧\n   ldap suffix = dc=⟦ORG⟧,dc=lan",
    ),
    (
        "exim_passwd_client_line",
        "pw",
        "# /etc/exim4/passwd.client\n# target.mail.server.example:login:password\n*.smtp.sendgrid.net:apikey-relay:⟦S⟧",
    ),
    (
        "proftpd_sql_connect_info",
        "pw",
        "<IfModule mod_sql.c>\n  SQLBackend mysql\n  SQLConnectInfo ftpdb@localhost proftpd ⟦S⟧\n  SQLAuthTypes Crypt\n</IfModule>",
    ),
    (
        "pureftpd_mysql_conf_password",
        "pw",
        "MYSQLServer     127.0.0.1\nMYSQLPort       3306\nMYSQLUser       pureftpd\nMYSQLPassword   ⟦S⟧\nMYSQLDatabase   pureftpd",
    ),
    (
        "opendkim_like_ldap_bind_in_nslcd_conf",
        "pw",
        "# /etc/nslcd.conf\nuri ldaps://ldap.⟦ORG⟧.lan\nbase dc=⟦ORG⟧,dc=lan\nbinddn cn=nslcd,ou=services,dc=⟦ORG⟧,dc=lan\nbindpw ⟦S⟧\ntls_reqcert demand",
    ),
    (
        "esphome_yaml_wifi_and_ota_password",
        "pw",
        'esphome:\n  name: greenhouse-sensor\n\nwifi:\n  ssid: "Greenhouse-IoT"\n  password: "⟦S⟧"\n\napi:\n  encryption:\n    key: !secret api_key',
    ),
    (
        "platformio_ini_build_flags_wifi_pass",
        "pw",
        '[env:esp32dev]\nplatform = espressif32\nboard = esp32dev\nframework = arduino\nbuild_flags =\n  -DWIFI_SSID=\\"Workshop\\"\n  -DWIFI_PASS=\\"⟦S⟧\\"\nmonitor_speed = 115200',
    ),
    (
        "openwrt_uci_wireless_key",
        "pw",
        "config wifi-iface 'default_radio0'\n\toption device 'radio0'\n\toption network 'lan'\n\toption mode 'ap'\n\toption ssid 'Lab-5G'\n\toption encryption 'sae-mixed'\n\toption key '⟦S⟧'",
    ),
    (
        "sabnzbd_ini_misc_password",
        "pw",
        "[misc]\nhost = 0.0.0.0\nport = 8080\nusername = media\npassword = ⟦S⟧\nbandwidth_max = 40M",
    ),
    (
        "transmission_settings_json_rpc_password",
        "pw",
        '{\n    "download-dir": "/downloads/complete",\n    "rpc-authentication-required": true,\n    "rpc-password": "⟦S⟧",\n    "rpc-username": "media",\n    "rpc-whitelist-enabled": false\n}',
    ),
]

CLI = [
    (
        "cli_rabbitmqctl_change_password",
        "pw",
        '$ sudo rabbitmqctl change_password celery \'⟦S⟧\'\nChanging password for user "celery" ...\n$ sudo rabbitmqctl set_permissions -p / celery ".*" ".*" ".*"',
    ),
    ("cli_htpasswd_b_nginx_file", "pw", "sudo htpasswd -b /etc/nginx/.htpasswd-grafana viewer ⟦S⟧"),
    (
        "cli_chpasswd_echo_pipe",
        "pw",
        "echo 'deploy:⟦S⟧' | sudo chpasswd && sudo usermod -aG docker deploy",
    ),
    (
        "cli_smbpasswd_printf_stdin",
        "pw",
        "(printf '%s\\n%s\\n' '⟦S⟧' '⟦S⟧') | sudo smbpasswd -a -s scanner",
    ),
    (
        "cli_iwctl_passphrase_connect",
        "pw",
        "iwctl --passphrase '⟦S⟧' station wlan0 connect \"Office-5G\"",
    ),
    (
        "cli_wpa_passphrase_ssid_arg",
        "pw",
        "wpa_passphrase \"Hangar-Guest\" '⟦S⟧' | sudo tee -a /etc/wpa_supplicant/wpa_supplicant-wlan0.conf",
    ),
    (
        "cli_openssl_enc_pass_arg",
        "pw",
        "tar czf - ./exports | openssl enc -aes-256-cbc -pbkdf2 -salt -pass pass:⟦S⟧ -out exports-$(date +%F).tgz.enc",
    ),
    (
        "cli_ffmpeg_rtmp_stream_key",
        "aln",
        "ffmpeg -re -i standup.mp4 -c:v libx264 -preset veryfast -b:v 3000k -c:a aac -f flv rtmp://live.twitch.tv/app/live_⟦N⟧_⟦S⟧",
    ),
    (
        "cli_rclone_config_create_webdav_pass",
        "pw",
        "rclone config create nextcloud webdav url https://cloud.⟦ORG⟧.de/remote.php/dav/files/⟦USER⟧ vendor nextcloud user ⟦USER⟧ pass '⟦S⟧'",
    ),
    (
        "cli_minio_mc_alias_set",
        "aln32",
        "mc alias set backup https://s3.⟦ORG⟧.internal:9000 backup-svc ⟦S⟧ --api S3v4",
    ),
    (
        "cli_neo4j_admin_set_initial_password",
        "pw",
        "docker exec -it neo4j neo4j-admin dbms set-initial-password '⟦S⟧'",
    ),
    (
        "cli_cypher_shell_p_flag",
        "pw",
        "cypher-shell -a neo4j://⟦HOST⟧:7687 -u neo4j -p '⟦S⟧' -f migrations/0042_add_index.cypher",
    ),
    (
        "cli_kubectl_create_secret_docker_registry_password",
        "pw",
        "kubectl -n ci create secret docker-registry harbor-pull --docker-server=harbor.⟦ORG⟧.io --docker-username='robot$ci' --docker-password='⟦S⟧'",
    ),
    (
        "cli_helm_repo_add_password_flag",
        "pw",
        "helm repo add internal https://charts.⟦ORG⟧.io --username ci-reader --password '⟦S⟧'",
    ),
    ("cli_docker_secret_create_printf", "pw", "printf '⟦S⟧' | docker secret create pg_password -"),
    ("cli_podman_login_p_flag", "pw", "podman login -u ⟦USER⟧ -p '⟦S⟧' quay.⟦ORG⟧.io"),
    (
        "cli_oras_login_password_flag",
        "pw",
        "oras login ghcr-mirror.⟦ORG⟧.io -u artifacts --password '⟦S⟧'",
    ),
    (
        "cli_crane_auth_login_p",
        "pw",
        "crane auth login registry.⟦ORG⟧.io -u release-bot -p '⟦S⟧' && crane copy alpine:3.20 registry.⟦ORG⟧.io/base/alpine:3.20",
    ),
    (
        "cli_argocd_login_password_flag",
        "pw",
        "argocd login argocd.⟦ORG⟧.io --username admin --password '⟦S⟧' --grpc-web",
    ),
    (
        "cli_kcadm_config_credentials_password",
        "pw",
        "/opt/keycloak/bin/kcadm.sh config credentials --server http://localhost:8080 --realm master --user admin --password '⟦S⟧'",
    ),
    (
        "cli_ldappasswd_s_new_password",
        "pw",
        "ldappasswd -H ldaps://ldap.⟦ORG⟧.lan -x -D 'cn=admin,dc=⟦ORG⟧,dc=lan' -W -s '⟦S⟧' 'uid=⟦USER⟧,ou=people,dc=⟦ORG⟧,dc=lan'",
    ),
    (
        "cli_sqlplus_slash_at_connect",
        "pw",
        "sqlplus -s app_batch/⟦S⟧@//⟦HOST⟧:1521/ORCLPDB1 @nightly_refresh.sql",
    ),
    (
        "cli_mysqldump_password_equals",
        "pw",
        "mysqldump --single-transaction --user=backup --password='⟦S⟧' --host=⟦HOST⟧ shop | gzip > shop-$(date +%F).sql.gz",
    ),
    (
        "cli_curl_proxy_user_flag",
        "pw",
        "curl -sS --proxy http://proxy.⟦ORG⟧.corp:3128 --proxy-user 'svc-build:⟦S⟧' https://repo1.maven.org/maven2/ -o /dev/null -w '%{http_code}\\n'",
    ),
    (
        "cli_git_credential_approve_heredoc",
        "pw",
        "git credential approve <<EOF\nprotocol=https\nhost=git.⟦ORG⟧.io\nusername=ci-mirror\npassword=⟦S⟧\nEOF",
    ),
    (
        "cli_svn_checkout_password_flag",
        "pw",
        "svn checkout https://svn.⟦ORG⟧.org/repos/firmware/trunk fw --username ⟦USER⟧ --password '⟦S⟧' --non-interactive",
    ),
    (
        "cli_influx_auth_create_password_v1",
        "pw",
        "influx v1 auth create --read-bucket ⟦HEX8⟧⟦HEX8⟧ --username grafana --password '⟦S⟧'",
    ),
    (
        "cli_rabbitmqadmin_declare_user",
        "pw",
        "rabbitmqadmin -u admin -p guest declare user name=billing password='⟦S⟧' tags=monitoring",
    ),
    (
        "cli_mosquitto_passwd_b",
        "pw",
        "sudo mosquitto_passwd -b /etc/mosquitto/passwd sensor-hub '⟦S⟧' && sudo systemctl reload mosquitto",
    ),
    (
        "cli_expect_send_password_script",
        "pw",
        '#!/usr/bin/expect -f\nspawn ssh admin@⟦IP⟧\nexpect "password:"\nsend "⟦S⟧\\r"\nexpect "#"\nsend "show running-config\\r"',
    ),
    (
        "cli_sshpass_e_env_inline",
        "pw",
        "SSHPASS='⟦S⟧' sshpass -e scp -o StrictHostKeyChecking=no build.tar.gz deploy@⟦IP⟧:/srv/releases/",
    ),
    (
        "cli_plink_pw_flag_windows",
        "pw",
        'plink.exe -ssh -batch root@⟦IP⟧ -pw "⟦S⟧" "systemctl restart nginx"',
    ),
    ("cli_pscp_pw_flag_upload", "pw", "pscp -pw ⟦S⟧ C:\\build\\release.zip deploy@⟦IP⟧:/tmp/"),
    (
        "cli_winrm_invoke_command_credential_inline",
        "pw",
        "$cred = New-Object System.Management.Automation.PSCredential('CORP\\svc_patch', (ConvertTo-SecureString '⟦S⟧' -AsPlainText -Force))\nInvoke-Command -ComputerName FS01 -Credential $cred -ScriptBlock { Get-HotFix | Select -Last 3 }",
    ),
    (
        "cli_cmdkey_add_generic_pass",
        "pw",
        "cmdkey /generic:TERMSRV/jump01.corp.local /user:CORP\\⟦USER⟧ /pass:⟦S⟧",
    ),
    (
        "cli_schtasks_create_rp_password",
        "pw",
        'schtasks /Create /TN "NightlyExport" /TR "C:\\jobs\\export.bat" /SC DAILY /ST 02:00 /RU CORP\\svc_export /RP ⟦S⟧',
    ),
    (
        "cli_sc_config_service_password",
        "pw",
        'sc.exe config "ReportServer" obj= "CORP\\svc_ssrs" password= "⟦S⟧"',
    ),
    (
        "cli_mongosh_eval_changeuserpassword",
        "pw",
        'mongosh "mongodb://admin@⟦HOST⟧:27017/admin" --eval \'db.getSiblingDB("app").changeUserPassword("app_rw", "⟦S⟧")\'',
    ),
    ("cli_ipa_user_mod_password_stdin_echo", "pw", "echo '⟦S⟧' | ipa user-mod ⟦USER⟧ --password"),
    (
        "cli_nmcli_connection_modify_psk",
        "pw",
        "nmcli connection modify \"Warehouse-WiFi\" wifi-sec.key-mgmt wpa-psk wifi-sec.psk '⟦S⟧'",
    ),
    (
        "cli_pulumi_config_set_plaintext",
        "pw",
        "pulumi config set --plaintext dbPassword '⟦S⟧' -s prod",
    ),
    (
        "cli_wp_cli_user_update_user_pass",
        "pw",
        "wp user update admin --user_pass='⟦S⟧' --skip-email --path=/var/www/html",
    ),
    (
        "cli_drush_user_password",
        "pw",
        "drush user:password admin '⟦S⟧' --uri=https://intranet.⟦ORG⟧.org",
    ),
    (
        "cli_rails_runner_update_password",
        "pw",
        'bin/rails runner \'User.find_by(email: "ops@⟦ORG⟧.io").update!(password: "⟦S⟧")\' -e production',
    ),
    (
        "cli_django_shell_c_set_password",
        "pw",
        "python manage.py shell -c \"from django.contrib.auth.models import User; u=User.objects.get(username='admin'); u.set_password('⟦S⟧'); u.save()\"",
    ),
    (
        "cli_gitlab_rails_runner_root_password",
        "pw",
        "sudo gitlab-rails runner \"u = User.find_by_username('root'); u.password = '⟦S⟧'; u.password_confirmation = '⟦S⟧'; u.save!\"",
    ),
    (
        "cli_grafana_cli_reset_admin_password",
        "pw",
        "docker exec -it grafana grafana cli admin reset-admin-password '⟦S⟧'",
    ),
    (
        "cli_jenkins_groovy_script_console_curl",
        "pw",
        "curl -u admin:$(cat ~/.jenkins-token) --data-urlencode \"script=hudson.model.User.get('ci-bot').addProperty(hudson.security.HudsonPrivateSecurityRealm.Details.fromPlainPassword('⟦S⟧'))\" https://jenkins.⟦ORG⟧.io/scriptText",
    ),
]

CODE = [
    (
        "go_pgx_config_password_field_assign",
        "pw",
        'cfg, _ := pgxpool.ParseConfig("postgres://reporter@⟦HOST⟧:5432/reports")\ncfg.ConnConfig.Password = "⟦S⟧"\npool, err := pgxpool.NewWithConfig(ctx, cfg)',
    ),
    (
        "go_redis_options_struct_password",
        "pw",
        'rdb := redis.NewClient(&redis.Options{\n\tAddr:     "⟦HOST⟧:6379",\n\tPassword: "⟦S⟧",\n\tDB:       2,\n})',
    ),
    (
        "go_smtp_plainauth_positional",
        "pw",
        'auth := smtp.PlainAuth("", "alerts@⟦ORG⟧.io", "⟦S⟧", "smtp.⟦ORG⟧.io")\nerr := smtp.SendMail("smtp.⟦ORG⟧.io:587", auth, from, to, msg)',
    ),
    (
        "java_hikari_setpassword_call",
        "pw",
        'HikariConfig config = new HikariConfig();\nconfig.setJdbcUrl("jdbc:mysql://⟦HOST⟧:3306/billing");\nconfig.setUsername("billing_app");\nconfig.setPassword("⟦S⟧");\nconfig.setMaximumPoolSize(10);',
    ),
    (
        "java_javamail_passwordauthentication_anon_class",
        "pw",
        'Session session = Session.getInstance(props, new Authenticator() {\n    @Override\n    protected PasswordAuthentication getPasswordAuthentication() {\n        return new PasswordAuthentication("noreply@⟦ORG⟧.com", "⟦S⟧");\n    }\n});',
    ),
    (
        "java_jsch_session_setpassword",
        "pw",
        'JSch jsch = new JSch();\nSession s = jsch.getSession("sftpuser", "⟦IP⟧", 22);\ns.setPassword("⟦S⟧");\ns.setConfig("StrictHostKeyChecking", "no");\ns.connect(15000);',
    ),
    (
        "kotlin_exposed_database_connect_named_args",
        "pw",
        'Database.connect(\n    url = "jdbc:postgresql://⟦HOST⟧:5432/catalog",\n    driver = "org.postgresql.Driver",\n    user = "catalog",\n    password = "⟦S⟧",\n)',
    ),
    (
        "kotlin_ktor_basic_auth_validate_literal",
        "pw",
        'install(Authentication) {\n    basic("admin") {\n        validate { c ->\n            if (c.name == "ops" && c.password == "⟦S⟧") UserIdPrincipal(c.name) else null\n        }\n    }\n}',
    ),
    (
        "scala_doobie_transactor_positional",
        "pw",
        'val xa = Transactor.fromDriverManager[IO](\n  "org.postgresql.Driver",\n  "jdbc:postgresql://⟦HOST⟧/ledger",\n  "ledger",\n  "⟦S⟧",\n  None\n)',
    ),
    (
        "csharp_sqlconnectionstringbuilder_password_prop",
        "pw",
        'var csb = new SqlConnectionStringBuilder\n{\n    DataSource = "sql01.corp.local",\n    InitialCatalog = "Payroll",\n    UserID = "payroll_app",\n    Password = "⟦S⟧",\n    Encrypt = true\n};',
    ),
    (
        "csharp_mailkit_authenticate_positional",
        "pw",
        'using var smtp = new SmtpClient();\nawait smtp.ConnectAsync("smtp.⟦ORG⟧.com", 587, SecureSocketOptions.StartTls);\nawait smtp.AuthenticateAsync("reports@⟦ORG⟧.com", "⟦S⟧");',
    ),
    (
        "fsharp_npgsql_connection_string_interpolated",
        "pw",
        'let connStr = $"Host={host};Username=etl;Password=⟦S⟧;Database=warehouse"\nuse conn = new NpgsqlConnection(connStr)',
    ),
    (
        "rust_sqlx_pgconnectoptions_builder",
        "pw",
        'let opts = PgConnectOptions::new()\n    .host("⟦HOST⟧")\n    .username("indexer")\n    .password("⟦S⟧")\n    .database("chain");\nlet pool = PgPoolOptions::new().connect_with(opts).await?;',
    ),
    (
        "rust_lettre_credentials_new_to_string",
        "pw",
        'let creds = Credentials::new("mailer@⟦ORG⟧.dev".to_owned(), "⟦S⟧".to_owned());\nlet mailer = SmtpTransport::relay("smtp.⟦ORG⟧.dev")?.credentials(creds).build();',
    ),
    (
        "swift_postgresnio_configuration_password",
        "pw",
        'let config = PostgresConnection.Configuration(\n    host: "⟦HOST⟧",\n    username: "vapor",\n    password: "⟦S⟧",\n    database: "vapor_prod",\n    tls: .prefer(try .init(configuration: .clientDefault))\n)',
    ),
    (
        "objc_nsurlcredential_credentialwithuser",
        "pw",
        'NSURLCredential *cred = [NSURLCredential credentialWithUser:@"kiosk"\n                                                 password:@"⟦S⟧"\n                                              persistence:NSURLCredentialPersistenceForSession];',
    ),
    (
        "php_laravel_config_database_default_literal",
        "pw",
        "'mysql' => [\n    'driver' => 'mysql',\n    'host' => env('DB_HOST', '127.0.0.1'),\n    'database' => env('DB_DATABASE', 'forge'),\n    'username' => env('DB_USERNAME', 'forge'),\n    'password' => env('DB_PASSWORD', '⟦S⟧'),\n],",
    ),
    (
        "php_phpmailer_password_property",
        "pw",
        "$mail = new PHPMailer(true);\n$mail->isSMTP();\n$mail->Host = 'smtp.⟦ORG⟧.fr';\n$mail->SMTPAuth = true;\n$mail->Username = 'contact@⟦ORG⟧.fr';\n$mail->Password = '⟦S⟧';\n$mail->Port = 465;",
    ),
    (
        "ruby_activerecord_establish_connection_hash",
        "pw",
        'ActiveRecord::Base.establish_connection(\n  adapter: "postgresql",\n  host: "⟦HOST⟧",\n  username: "legacy_import",\n  password: "⟦S⟧",\n  database: "legacy"\n)',
    ),
    (
        "ruby_net_ssh_start_password_option",
        "pw",
        'Net::SSH.start("⟦IP⟧", "deploy", password: "⟦S⟧", non_interactive: true) do |ssh|\n  puts ssh.exec!("uptime")\nend',
    ),
    (
        "perl_net_openssh_passwd_option",
        "pw",
        "my $ssh = Net::OpenSSH->new('backup@⟦IP⟧', passwd => '⟦S⟧', timeout => 30);\n$ssh->error and die \"ssh failed: \" . $ssh->error;",
    ),
    (
        "perl_mime_lite_smtp_authpass",
        "pw",
        "$msg->send('smtp', 'smtp.⟦ORG⟧.net', AuthUser => 'nightly@⟦ORG⟧.net', AuthPass => '⟦S⟧', Port => 587);",
    ),
    (
        "lua_luasql_mysql_connect_positional",
        "pw",
        'local driver = require "luasql.mysql"\nlocal env = driver.mysql()\nlocal conn = env:connect("gamedb", "gameserver", "⟦S⟧", "⟦HOST⟧", 3306)',
    ),
    (
        "r_mongolite_url_with_password",
        "pwu",
        'library(mongolite)\nm <- mongo(collection = "surveys", db = "field",\n           url = "mongodb://analyst:⟦S⟧@⟦HOST⟧:27017/field?authSource=admin")',
    ),
    (
        "julia_libpq_conninfo_string",
        "pw",
        'using LibPQ\nconn = LibPQ.Connection("host=⟦HOST⟧ dbname=sim user=julia password=⟦S⟧ sslmode=require")',
    ),
    (
        "haskell_postgresql_simple_connectinfo_positional",
        "pw",
        'conn <- connect (ConnectInfo "⟦HOST⟧" 5432 "hs_app" "⟦S⟧" "inventory")',
    ),
    (
        "ocaml_caqti_uri_with_password",
        "pwu",
        'let uri = Uri.of_string "postgresql://ocaml_app:⟦S⟧@⟦HOST⟧:5432/orders" in\nCaqti_lwt_unix.connect uri',
    ),
    (
        "clojure_next_jdbc_db_spec_map",
        "pw",
        '(def db {:dbtype "postgresql"\n         :dbname "events"\n         :host "⟦HOST⟧"\n         :user "clj_events"\n         :password "⟦S⟧"})',
    ),
    (
        "elixir_swoosh_smtp_adapter_password",
        "pw",
        'config :my_app, MyApp.Mailer,\n  adapter: Swoosh.Adapters.SMTP,\n  relay: "smtp.⟦ORG⟧.io",\n  username: "mailer@⟦ORG⟧.io",\n  password: "⟦S⟧",\n  tls: :always',
    ),
    (
        "dart_postgres_endpoint_password",
        "pw",
        "final conn = await Connection.open(\n  Endpoint(host: '⟦HOST⟧', database: 'app', username: 'flutter_api', password: '⟦S⟧'),\n  settings: ConnectionSettings(sslMode: SslMode.require),\n);",
    ),
    (
        "groovy_sql_newinstance_positional",
        "pw",
        "def sql = Sql.newInstance('jdbc:oracle:thin:@⟦HOST⟧:1521/ERP', 'erp_read', '⟦S⟧', 'oracle.jdbc.OracleDriver')",
    ),
    (
        "vbnet_smtpclient_networkcredential_property",
        "pw",
        'Dim client As New SmtpClient("smtp.⟦ORG⟧.local", 25)\nclient.Credentials = New NetworkCredential("scan2mail", "⟦S⟧")\nclient.Send(msg)',
    ),
    (
        "cobol_embedded_sql_connect_using",
        "pw",
        "           MOVE 'BATCHUSR' TO WS-USER.\n           MOVE '⟦S⟧' TO WS-PASS.\n           EXEC SQL\n               CONNECT :WS-USER IDENTIFIED BY :WS-PASS\n           END-EXEC.",
    ),
    (
        "abap_http_client_authenticate_call",
        "pw",
        "cl_http_client=>create_by_url( EXPORTING url = 'https://api.⟦ORG⟧.com/v1' IMPORTING client = lo_client ).\nlo_client->authenticate( username = 'SAP_RFC' password = '⟦S⟧' ).",
    ),
    (
        "nim_db_postgres_open_positional",
        "pw",
        'import db_connector/db_postgres\nlet db = open("⟦HOST⟧", "nim_app", "⟦S⟧", "metrics")',
    ),
    (
        "micropython_wlan_connect_positional",
        "pw",
        "import network\nwlan = network.WLAN(network.STA_IF)\nwlan.active(True)\nwlan.connect('Greenhouse', '⟦S⟧')\nwhile not wlan.isconnected():\n    pass",
    ),
    (
        "c_mysql_real_connect_positional",
        "pw",
        'if (!mysql_real_connect(conn, "⟦HOST⟧", "telemetry", "⟦S⟧", "telemetry", 3306, NULL, 0)) {\n    fprintf(stderr, "%s\\n", mysql_error(conn));\n    return 1;\n}',
    ),
    (
        "cpp_libssh_userauth_password",
        "pw",
        'rc = ssh_userauth_password(session, NULL, "⟦S⟧");\nif (rc != SSH_AUTH_SUCCESS) {\n    std::cerr << "auth failed: " << ssh_get_error(session) << std::endl;\n}',
    ),
    (
        "python_pysftp_connection_kwargs",
        "pw",
        "with pysftp.Connection('sftp.⟦ORG⟧-partner.com', username='⟦ORG⟧_drop', password='⟦S⟧', cnopts=cnopts) as sftp:\n    sftp.put('out/invoices.csv')",
    ),
    (
        "python_imaplib_login_positional",
        "pw",
        "M = imaplib.IMAP4_SSL('imap.⟦ORG⟧.com')\nM.login('invoices@⟦ORG⟧.com', '⟦S⟧')\nM.select('INBOX')",
    ),
    (
        "python_ldap3_connection_password_kwarg",
        "pw",
        "conn = Connection(server, user='CN=svc_sync,OU=Service,DC=corp,DC=local', password='⟦S⟧', auto_bind=True)",
    ),
    (
        "python_fstring_dsn_literal_password",
        "pw",
        'PG_PASS = "⟦S⟧"\nDSN = f"postgresql://etl:{PG_PASS}@⟦HOST⟧:5432/warehouse"\nengine = create_engine(DSN, pool_pre_ping=True)',
    ),
    (
        "python_pydantic_settings_default_secret",
        "pw",
        'class Settings(BaseSettings):\n    model_config = SettingsConfigDict(env_file=".env")\n    db_user: str = "api"\n    db_password: SecretStr = SecretStr("⟦S⟧")',
    ),
    (
        "typescript_typeorm_datasource_options",
        "pw",
        "export const AppDataSource = new DataSource({\n  type: 'postgres',\n  host: '⟦HOST⟧',\n  port: 5432,\n  username: 'nest',\n  password: '⟦S⟧',\n  database: 'nest_prod',\n});",
    ),
    (
        "typescript_ioredis_constructor_options",
        "pw",
        "const redis = new Redis({ host: '⟦HOST⟧', port: 6380, password: '⟦S⟧', tls: {} });",
    ),
    (
        "javascript_template_literal_basic_auth_header",
        "pw",
        "const auth = Buffer.from(`svc-export:⟦S⟧`).toString('base64');\nconst res = await fetch(url, { headers: { Authorization: `Basic ${auth}` } });",
    ),
    (
        "javascript_knexfile_connection_object",
        "pw",
        "module.exports = {\n  production: {\n    client: 'pg',\n    connection: { host: '⟦HOST⟧', user: 'knex', password: '⟦S⟧', database: 'shop' },\n    pool: { min: 2, max: 10 },\n  },\n};",
    ),
    (
        "bash_heredoc_sql_alter_password",
        "pw",
        "psql -h ⟦HOST⟧ -U postgres <<SQL\nALTER USER grafana_ro WITH PASSWORD '⟦S⟧';\nGRANT pg_read_all_data TO grafana_ro;\nSQL",
    ),
    (
        "makefile_recipe_inline_password",
        "pw",
        "deploy-db:\n\tPGPASSWORD=⟦S⟧ psql -h $(DB_HOST) -U migrator -f schema.sql\n\nlint:\n\truff check .",
    ),
    (
        "cmake_set_cache_string_password",
        "pw",
        'set(TEST_DB_USER "ci" CACHE STRING "")\nset(TEST_DB_PASSWORD "⟦S⟧" CACHE STRING "integration test db password")',
    ),
    (
        "gradle_kts_signing_configs_keypassword",
        "pw",
        'signingConfigs {\n    create("release") {\n        storeFile = file("../keys/release.jks")\n        storePassword = System.getenv("STORE_PW")\n        keyAlias = "upload"\n        keyPassword = "⟦S⟧"\n    }\n}',
    ),
    (
        "xcconfig_api_secret_line",
        "aln32",
        "// Secrets.xcconfig\nAPI_BASE_URL = https:/$()/api.⟦ORG⟧.app\nAPI_CLIENT_SECRET = ⟦S⟧",
    ),
    (
        "unity_csharp_serializefield_default_secret",
        "aln32",
        'public class Leaderboard : MonoBehaviour\n{\n    [SerializeField] private string serverUrl = "https://lb.⟦ORG⟧games.com";\n    [SerializeField] private string serverSecret = "⟦S⟧";\n}',
    ),
    (
        "godot_gdscript_const_password",
        "pw",
        'extends Node\n\nconst DB_USER := "godot_backend"\nconst DB_PASSWORD := "⟦S⟧"\n\nfunc _ready() -> void:\n    _connect()',
    ),
    (
        "graphql_login_mutation_variables",
        "pw",
        'mutation Login($email: String!, $password: String!) {\n  login(email: $email, password: $password) { token }\n}\n\n# variables\n{"email": "qa-admin@⟦ORG⟧.io", "password": "⟦S⟧"}',
    ),
    (
        "textproto_grpc_request_password_field",
        "pw",
        '# request.textproto for grpcurl\nusername: "svc-provisioner"\npassword: "⟦S⟧"\nrealm: "internal"',
    ),
    (
        "solidity_comment_deployer_private_password",
        "pw",
        "// Deployed from the hardware wallet; keystore at ~/.foundry/keystores/deployer\n// keystore password: ⟦S⟧\ncontract Treasury is Ownable {",
    ),
]

LOGS = [
    (
        "log_auditd_execve_plain_args",
        "pw",
        'type=EXECVE msg=audit(1718⟦N⟧.512:8812): argc=5 a0="mysql" a1="-uroot" a2="-p⟦S⟧" a3="-e" a4="SHOW DATABASES"',
    ),
    (
        "log_celery_task_received_args_repr",
        "pw",
        "[⟦TS⟧: INFO/MainProcess] Task sync.tasks.import_ftp[⟦HEX8⟧-1c2d-4e5f-8a9b-⟦HEX8⟧0a1b] received\n[⟦TS⟧: DEBUG/ForkPoolWorker-3] args=('ftp.partner.example', 'imports', '⟦S⟧') kwargs={'since': '2025-06-01'}",
    ),
    (
        "log_python_logging_debug_dict_repr",
        "pw",
        "DEBUG:sync.client:connecting with settings {'host': '⟦HOST⟧', 'port': 5432, 'user': 'sync', 'password': '⟦S⟧', 'sslmode': 'require'}",
    ),
    (
        "log_go_printf_plus_v_struct",
        "pw",
        "2025/06/11 09:14:22 loaded config: {Listen::8080 DB:{Host:⟦HOST⟧ Port:5432 User:orders Password:⟦S⟧ Name:orders} Debug:true}",
    ),
    (
        "log_nginx_access_post_query_pwd",
        "pwu",
        '⟦IP⟧ - - [11/Jun/2025:10:02:11 +0000] "GET /cgi-bin/login.cgi?user=admin&pwd=⟦S⟧&lang=en HTTP/1.1" 302 0 "-" "Mozilla/5.0"',
    ),
    (
        "log_kubectl_get_secret_yaml_decoded_by_agent",
        "pw",
        "I decoded the secret to check it matches what the app expects:\n\n$ kubectl get secret pg-app -o jsonpath='{.data.password}' | base64 -d\n⟦S⟧\n\nSo the password is right; the problem is the role lacks CONNECT on the new database.",
    ),
    (
        "log_docker_compose_config_resolved_env",
        "pw",
        "$ docker compose config\nservices:\n  db:\n    environment:\n      POSTGRES_DB: app\n      POSTGRES_PASSWORD: ⟦S⟧\n      POSTGRES_USER: app\n    image: postgres:16",
    ),
    (
        "log_spring_actuator_env_unmasked_json",
        "pw",
        '{"name":"Config resource \'class path resource [application-prod.properties]\'","properties":{"spring.datasource.url":{"value":"jdbc:postgresql://⟦HOST⟧/shop"},"spring.datasource.password":{"value":"⟦S⟧"}}}',
    ),
    (
        "log_ansible_vvv_module_args_password",
        "pw",
        '<⟦IP⟧> EXEC /bin/sh -c \'/usr/bin/python3 /root/.ansible/tmp/AnsiballZ_mysql_user.py\'\nok: [db01] => {"changed": false, "invocation": {"module_args": {"name": "wp", "password": "⟦S⟧", "priv": "wordpress.*:ALL", "host": "%"}}}',
    ),
    (
        "log_mitmproxy_flow_form_body",
        "pwu",
        "POST https://portal.⟦ORG⟧.com/api/session\n    Content-Type: application/x-www-form-urlencoded\n    username=⟦USER⟧&password=⟦S⟧&remember=1\n << 200 OK 312b",
    ),
    (
        "log_wireshark_follow_http_stream_json_login",
        "pw",
        'POST /api/v2/auth HTTP/1.1\r\nHost: nvr.local\r\nContent-Type: application/json\r\nContent-Length: 58\r\n\r\n{"username":"admin","password":"⟦S⟧","remember":true}HTTP/1.1 200 OK',
    ),
    (
        "log_sentry_breadcrumb_http_request_data",
        "pw",
        'Breadcrumbs\n  http  POST https://auth.⟦ORG⟧.io/login [200]\n  data  {"email":"ops@⟦ORG⟧.io","password":"⟦S⟧"}\n  query SELECT "users".* FROM "users" WHERE "users"."email" = $1',
    ),
    (
        "log_k8s_describe_pod_args_password_flag",
        "pw",
        "Containers:\n  exporter:\n    Image:      prom/mysqld-exporter:v0.15.1\n    Args:\n      --mysqld.address=⟦HOST⟧:3306\n      --mysqld.username=exporter\n      --mysqld.password=⟦S⟧\n    State:          Running",
    ),
    (
        "log_systemd_journal_failed_command_line",
        "pw",
        "Jun 11 03:00:01 backup01 backup.sh[⟦N⟧]: + rsync -az --password-file=/dev/stdin <<< ⟦S⟧ /srv/data rsync://backup@nas01/data\nJun 11 03:00:02 backup01 systemd[1]: backup.service: Main process exited, code=exited, status=5/NOTINSTALLED",
    ),
    (
        "log_pytest_assert_rewrite_shows_password",
        "pw",
        "    def test_login_admin(client):\n>       assert client.login(\"admin\", \"⟦S⟧\") is True\nE       AssertionError: assert False is True\nE        +  where False = <bound method Client.login of <Client host='⟦HOST⟧'>>('admin', '⟦S⟧')",
    ),
    (
        "log_jest_snapshot_config_password",
        "pw",
        'exports[`buildConfig production 1`] = `\n{\n  "db": {\n    "host": "⟦HOST⟧",\n    "password": "⟦S⟧",\n    "user": "app",\n  },\n}\n`;',
    ),
    (
        "log_rust_panic_debug_struct_password",
        "pw",
        'thread \'main\' panicked at src/db.rs:41:10:\nfailed to connect: Config { host: "⟦HOST⟧", user: "indexer", password: Some("⟦S⟧"), dbname: "chain" }',
    ),
    (
        "log_dotnet_ef_sensitive_data_logging",
        "pw",
        "info: Microsoft.EntityFrameworkCore.Database.Command[20101]\n      Executed DbCommand (3ms) [Parameters=[@__email_0='ops@⟦ORG⟧.com' (Size = 4000), @__pwd_1='⟦S⟧' (Size = 4000)], CommandType='Text', CommandTimeout='30']",
    ),
    (
        "log_mysql_general_log_set_password",
        "pw",
        "2025-06-11T08:12:44.102931Z\t   ⟦N⟧ Query\tCREATE USER 'reporting'@'10.%' IDENTIFIED BY '⟦S⟧'",
    ),
    (
        "log_postgres_statement_log_alter_role",
        "pw",
        "2025-06-11 08:15:02.331 UTC [⟦N⟧] postgres@app LOG:  statement: ALTER ROLE metabase PASSWORD '⟦S⟧';",
    ),
    (
        "log_php_xdebug_trace_args",
        "pw",
        "    0.0123     412344   -> PDO->__construct($dsn = 'mysql:host=⟦HOST⟧;dbname=shop', $username = 'shop', $password = '⟦S⟧') /var/www/src/Db.php:18",
    ),
    (
        "log_java_tostring_lombok_datasource",
        "pw",
        "2025-06-11 10:01:17.442  INFO 1 --- [main] c.a.b.DbConfig : Using DataSourceProperties(url=jdbc:mysql://⟦HOST⟧/erp, username=erp, password=⟦S⟧, driverClassName=com.mysql.cj.jdbc.Driver)",
    ),
]

SQL = [
    (
        "sql_postgres_fdw_user_mapping_options",
        "pw",
        "CREATE SERVER legacy_srv FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '⟦HOST⟧', dbname 'legacy');\nCREATE USER MAPPING FOR app SERVER legacy_srv OPTIONS (user 'fdw_reader', password '⟦S⟧');",
    ),
    (
        "sql_mysql_change_replication_source_password",
        "pw",
        "CHANGE REPLICATION SOURCE TO\n  SOURCE_HOST='⟦HOST⟧',\n  SOURCE_USER='repl',\n  SOURCE_PASSWORD='⟦S⟧',\n  SOURCE_AUTO_POSITION=1;\nSTART REPLICA;",
    ),
    (
        "sql_postgres_create_subscription_conninfo",
        "pw",
        "CREATE SUBSCRIPTION orders_sub\n  CONNECTION 'host=⟦HOST⟧ port=5432 dbname=orders user=replicator password=⟦S⟧'\n  PUBLICATION orders_pub;",
    ),
    (
        "sql_mssql_sp_addlinkedsrvlogin_rmtpassword",
        "pw",
        "EXEC sp_addlinkedsrvlogin @rmtsrvname = N'ERP_LINK', @useself = N'False', @locallogin = NULL, @rmtuser = N'erp_reader', @rmtpassword = N'⟦S⟧';",
    ),
    (
        "sql_snowflake_create_user_password",
        "pw",
        "CREATE USER looker_svc PASSWORD = '⟦S⟧' DEFAULT_ROLE = REPORTING DEFAULT_WAREHOUSE = BI_WH MUST_CHANGE_PASSWORD = FALSE;",
    ),
    (
        "sql_clickhouse_identified_with_sha256_password_by",
        "pw",
        "CREATE USER grafana IDENTIFIED WITH sha256_password BY '⟦S⟧' HOST IP '10.0.0.0/8' SETTINGS readonly = 1;",
    ),
    (
        "cql_create_role_with_password_login",
        "pw",
        "CREATE ROLE spark_etl WITH PASSWORD = '⟦S⟧' AND LOGIN = true;\nGRANT SELECT ON KEYSPACE telemetry TO spark_etl;",
    ),
    (
        "cypher_alter_user_set_password",
        "pw",
        "ALTER USER reporting SET PASSWORD '⟦S⟧' CHANGE NOT REQUIRED;",
    ),
    (
        "mongo_shell_createuser_pwd_field",
        "pw",
        'use admin\ndb.createUser({\n  user: "metabase",\n  pwd: "⟦S⟧",\n  roles: [{ role: "read", db: "events" }]\n})',
    ),
    (
        "redis_acl_setuser_gt_password",
        "pw",
        "127.0.0.1:6379> ACL SETUSER worker on >⟦S⟧ ~jobs:* +@list +@connection\nOK",
    ),
    (
        "influxql_create_user_with_password",
        "pw",
        "> CREATE USER telegraf WITH PASSWORD '⟦S⟧'\n> GRANT WRITE ON metrics TO telegraf",
    ),
    (
        "sql_oracle_alter_user_identified_by_replace",
        "pw",
        'ALTER USER app_owner IDENTIFIED BY "⟦S⟧" REPLACE "oldpass";',
    ),
    (
        "sql_mssql_openrowset_pwd_in_provider_string",
        "pw",
        "SELECT * FROM OPENROWSET('SQLNCLI', 'Server=⟦HOST⟧;UID=report;PWD=⟦S⟧;', 'SELECT TOP 10 * FROM Sales.dbo.Orders');",
    ),
    (
        "sql_mysql_federated_connection_string",
        "pwu",
        "CREATE TABLE remote_orders (id INT, total DECIMAL(10,2))\nENGINE=FEDERATED\nCONNECTION='mysql://fed_user:⟦S⟧@⟦HOST⟧:3306/shop/orders';",
    ),
    (
        "sql_saphana_create_user_password",
        "pw",
        'CREATE USER BW_EXTRACT PASSWORD "⟦S⟧" NO FORCE_FIRST_PASSWORD_CHANGE;',
    ),
    (
        "sql_vertica_create_user_identified_by",
        "pw",
        "CREATE USER dbt_runner IDENTIFIED BY '⟦S⟧' RESOURCE POOL etl_pool;",
    ),
    (
        "sql_cockroach_create_user_with_password",
        "pw",
        "root@crdb:26257/defaultdb> CREATE USER IF NOT EXISTS ledger_svc WITH PASSWORD '⟦S⟧';\nCREATE ROLE",
    ),
]

COMMITS = [
    (
        "commit_fixup_subject_with_password",
        "pw",
        "fixup! use staging db password ⟦S⟧ until vault is wired up",
    ),
    (
        "commit_annotated_tag_message_credentials",
        "pw",
        "tag v3.4.0\nTagger: ⟦USER⟧ <⟦USER⟧@⟦ORG⟧.io>\n\nRelease 3.4.0\n\nDemo tenant for the sales team: demo-admin / ⟦S⟧",
    ),
    (
        "commit_cherry_pick_body_env_line",
        "pw",
        "hotfix: restore SMTP relay\n\nSMTP_PASS=⟦S⟧ was missing from the prod env after the migration.\n\n(cherry picked from commit ⟦SHA⟧)",
    ),
    (
        "commit_git_notes_show_output",
        "pw",
        "$ git notes show HEAD~2\nDeployed to prod by hand. Used the break-glass DB password ⟦S⟧, rotate after incident review.",
    ),
    (
        "commit_changelog_md_entry_with_password",
        "pw",
        "## [2.8.1] - 2025-06-10\n### Fixed\n- Seed script now creates the `support` user (password: `⟦S⟧`) for the help desk.",
    ),
    (
        "commit_merge_conflict_markers_env",
        "pw",
        "<<<<<<< HEAD\nDB_PASSWORD=⟦S⟧\n=======\nDB_PASSWORD=${DB_PASSWORD}\n>>>>>>> origin/main",
    ),
    (
        "commit_squash_bullets_with_password",
        "pw",
        "feat(ops): add nightly backup job (#⟦N⟧)\n\n* add cron\n* wip\n* set restic repo password to ⟦S⟧ for now\n* lint",
    ),
    (
        "commit_co_authored_trailer_plus_tested_with",
        "pw",
        "test(e2e): cover password reset\n\nTested-with: qa-admin / ⟦S⟧\nCo-authored-by: ⟦USER⟧ <⟦USER⟧@users.noreply.github.com>",
    ),
    (
        "commit_revert_body_quotes_old_line",
        "pw",
        'Revert "hardcode ldap bind password"\n\nThis reverts commit ⟦SHA⟧.\nThe line `bindpw ⟦S⟧` must never be committed; the password has been rotated.',
    ),
    (
        "commit_git_show_stat_and_diff_yaml",
        "pw",
        "commit ⟦SHA⟧\n\n    ci: use mirror registry\n\n .woodpecker.yml | 2 +-\n\n-      password: ${REGISTRY_PASSWORD}\n+      password: ⟦S⟧",
    ),
    (
        "commit_pr_review_comment_suggestion_block",
        "pw",
        "**⟦USER⟧** commented on `config/prod.yml` line 14:\n\n```suggestion\n  password: ⟦S⟧\n```\nThis is the value from the old server, can you confirm it still works?",
    ),
    (
        "commit_interactive_rebase_todo_subject",
        "pw",
        "pick ⟦HEX8⟧ add worker\nreword ⟦HEX8⟧ set redis password ⟦S⟧ in compose\npick ⟦HEX8⟧ docs",
    ),
]

CHATS = [
    (
        "maltese_chat_password_tas_server",
        "pw",
        "[09:12] ⟦USER⟧: il-password tas-server tal-backup hija ⟦S⟧, tibdilhiex qabel il-Ġimgħa",
    ),
    (
        "albanian_chat_fjalekalimi_databazes",
        "pw",
        "Përshëndetje! Fjalëkalimi i databazës për staging është ⟦S⟧ — mos e publiko në repo.",
    ),
    (
        "macedonian_chat_lozinka_za_vpn",
        "pw",
        "Лозинката за VPN е ⟦S⟧, корисникот е ⟦USER⟧. Ќе ја смениме по викендот.",
    ),
    (
        "armenian_chat_gaghtnabar_admin",
        "pw",
        "Ադմին վահանակի գաղտնաբառը՝ ⟦S⟧։ Խնդրում եմ չփոխել առանց ինձ ասելու։",
    ),
    (
        "azerbaijani_chat_sifre_ftp",
        "pw",
        "Salam, FTP üçün istifadəçi: upload, şifrə: ⟦S⟧ . Sabah dəyişəcəyik.",
    ),
    (
        "uzbek_chat_parol_kassa",
        "pw",
        "Kassa tizimiga kirish uchun parol: ⟦S⟧ (login: kassir2). Hech kimga bermang!",
    ),
    (
        "mongolian_chat_nuuts_ug_router",
        "pw",
        "Оффисын роутерын нууц үг: ⟦S⟧ . Админ хэрэглэгч нь admin.",
    ),
    ("nepali_chat_password_server_ko", "pw", "सर्भरको पासवर्ड ⟦S⟧ हो, कृपया कसैलाई नदिनुहोस्।"),
    ("sinhala_chat_murapadaya_email", "pw", "කාර්යාල email ගිණුමේ මුරපදය ⟦S⟧ . හෙට වෙනස් කරන්න."),
    ("khmer_chat_peak_samngat_wifi", "pw", "ពាក្យសម្ងាត់ Wi-Fi ការិយាល័យ៖ ⟦S⟧"),
    ("lao_chat_lahat_phan_database", "pw", "ລະຫັດຜ່ານຖານຂໍ້ມູນ staging ແມ່ນ ⟦S⟧ ຢ່າແບ່ງປັນໃຫ້ຄົນອື່ນ"),
    ("burmese_chat_sakar_hwat_admin", "pw", "admin panel စကားဝှက်က ⟦S⟧ ပါ။ မနက်ဖြန် ပြောင်းပါမယ်။"),
    ("amharic_chat_yeyilef_qal_server", "pw", "የሰርቨሩ የይለፍ ቃል ⟦S⟧ ነው። እባክህ ለማንም አትስጥ።"),
    (
        "yoruba_chat_oro_asina_akanti",
        "pw",
        "Ọ̀rọ̀ aṣínà fún àkáǹtì admin ni ⟦S⟧ , jọ̀wọ́ má ṣe pín in.",
    ),
    ("hausa_chat_kalmar_sirri_sabar", "pw", "Kalmar sirri ta sabar ita ce ⟦S⟧ . Kada ka ba kowa."),
    (
        "zulu_chat_iphasiwedi_yesistimu",
        "pw",
        "Iphasiwedi yesistimu yama-oda ithi ⟦S⟧ , ungayinikezi muntu.",
    ),
    (
        "somali_chat_erayga_sirta_ah",
        "pw",
        "Erayga sirta ah ee database-ka waa ⟦S⟧ , fadlan ha la wadaagin.",
    ),
    (
        "malagasy_chat_teny_miafina",
        "pw",
        "Ny teny miafina ho an'ny serveur dia ⟦S⟧ . Aza zaraina amin'ny hafa.",
    ),
    ("maori_chat_kupuhipa_wifi", "pw", "Kia ora! Ko te kupuhipa mō te Wi-Fi o te tari ko ⟦S⟧"),
    (
        "irish_chat_pasfhocal_freastalai",
        "pw",
        "Is é ⟦S⟧ pasfhocal an fhreastalaí cúltaca. Ná roinn é le do thoil.",
    ),
    (
        "scottish_gaelic_chat_facal_faire",
        "pw",
        "Seo am facal-faire airson a' phanail rianachd: ⟦S⟧",
    ),
    (
        "breton_chat_ger_tremen",
        "pw",
        "Ar ger-tremen evit ar servijer eo ⟦S⟧ , na ro anezhañ da zen.",
    ),
    (
        "luxembourgish_chat_passwuert_nas",
        "pw",
        "Moien, d'Passwuert fir den NAS ass ⟦S⟧ . Ännere mer et muer.",
    ),
    ("faroese_chat_loyniord", "pw", "Loyniorðið til ambætaran er ⟦S⟧ , ikki geva tað víðari."),
    (
        "esperanto_chat_pasvorto_datumbazo",
        "pw",
        "La pasvorto por la datumbazo estas ⟦S⟧ — bonvolu ne dividi ĝin.",
    ),
    (
        "kurdish_kurmanji_chat_sifre_panel",
        "pw",
        "Şîfreya panela rêveberiyê ev e: ⟦S⟧ . Ji kesî re nebêje.",
    ),
    (
        "pashto_chat_patnum_email",
        "pw",
        "د دفتر ایمیل پټنوم ⟦S⟧ دی، مهرباني وکړئ له چا سره یې مه شریکوئ.",
    ),
    ("telugu_chat_password_server", "pw", "సర్వర్ పాస్‌వర్డ్ ⟦S⟧ , దయచేసి ఎవరికీ చెప్పకండి."),
    ("kannada_chat_password_router", "pw", "ರೌಟರ್ ಪಾಸ್‌ವರ್ಡ್: ⟦S⟧ (ಬಳಕೆದಾರ: admin)"),
    ("malayalam_chat_password_db", "pw", "ഡാറ്റാബേസ് പാസ്‌വേഡ് ⟦S⟧ ആണ്. ആരോടും പറയരുത്."),
    ("marathi_chat_password_vpn", "pw", "VPN चा पासवर्ड ⟦S⟧ आहे, युजरनेम ⟦USER⟧."),
    ("gujarati_chat_password_billing", "pw", "બિલિંગ સોફ્ટવેરનો પાસવર્ડ ⟦S⟧ છે."),
    ("punjabi_chat_password_cctv", "pw", "CCTV DVR ਦਾ ਪਾਸਵਰਡ ⟦S⟧ ਹੈ, admin ਯੂਜ਼ਰ ਨਾਲ।"),
    ("haitian_creole_chat_modpas", "pw", "Modpas sèvè a se ⟦S⟧ , pa bay pèsonn li."),
    (
        "kinyarwanda_chat_ijambo_banga",
        "pw",
        "Ijambo ry'ibanga rya konti ya admin ni ⟦S⟧ . Ntuzaribwire undi.",
    ),
    ("belarusian_chat_parol_servera", "pw", "Пароль ад сервера: ⟦S⟧ . Не пішы яго ў агульны чат."),
    ("bosnian_chat_sifra_baza", "pw", "Šifra za bazu na produkciji je ⟦S⟧ , korisnik je app_rw."),
    (
        "javanese_chat_tembung_sandhi",
        "pw",
        "Tembung sandhi kanggo server backup yaiku ⟦S⟧ , aja disebar ya.",
    ),
    (
        "cebuano_chat_password_sa_wifi",
        "pw",
        "Ang password sa Wi-Fi sa opisina kay ⟦S⟧ , ayaw ipanghatag.",
    ),
    ("tajik_chat_ramz_server", "pw", "Рамзи сервер: ⟦S⟧ . Ба касе нагӯед."),
    ("kyrgyz_chat_syrsoz", "pw", "Админ панелдин сырсөзү: ⟦S⟧ ."),
    ("west_frisian_chat_wachtwurd", "pw", "It wachtwurd foar de server is ⟦S⟧ , net trochjaan."),
    ("igbo_chat_okwuntughe", "pw", "Okwuntughe maka akaụntụ admin bụ ⟦S⟧ ."),
    (
        "quechua_mixed_spanish_chat_clave",
        "pw",
        "Allillanchu, kay clave servidorpaq: ⟦S⟧ — ama pimanpas quwaychu.",
    ),
]

# provider-shaped hand-written entries: (kind, generator, template)
PROVIDER_EXTRA = [
    (
        "glab_cli_config_yml_hosts_token",
        lambda: "glpat-" + rs(20, B64URL),
        "# ~/.config/glab-cli/config.yml\ngit_protocol: ssh\nhosts:\n    gitlab.com:\n        token: ⟦S⟧\n        api_protocol: https\n        user: ⟦USER⟧",
    ),
    (
        "vault_token_helper_file_cat",
        lambda: "hvs.CAES" + rs(86, B64URL),
        "$ cat ~/.vault-token\n⟦S⟧\n$ vault token lookup | grep policies",
    ),
    (
        "wakatime_cfg_settings_api_key",
        lambda: "waka_" + ruuid(),
        "[settings]\napi_key = ⟦S⟧\nstatus_bar_enabled = true\nexclude_unknown_project = true",
    ),
    (
        "azure_sp_create_for_rbac_json_output",
        t_azure_client_secret,
        '$ az ad sp create-for-rbac --name gh-deployer --role contributor --scopes /subscriptions/⟦HEX8⟧-0000-4000-8000-⟦HEX8⟧0000\n{\n  "appId": "⟦HEX8⟧-1a2b-4c3d-9e8f-⟦HEX8⟧abcd",\n  "displayName": "gh-deployer",\n  "password": "⟦S⟧",\n  "tenant": "⟦HEX8⟧-5f6e-4d7c-8b9a-⟦HEX8⟧1234"\n}',
    ),
    (
        "huggingface_cache_token_file_cat",
        lambda: "hf_" + rs(34, LOW + UP),
        "root@gpu-node-3:~# cat ~/.cache/huggingface/token\n⟦S⟧root@gpu-node-3:~#",
    ),
    (
        "cloudflared_cert_pem_argo_tunnel_token",
        lambda: base64.b64encode(
            json.dumps({"zoneID": hx(32), "accountID": hx(32), "apiToken": rs(40, B64URL)}).encode()
        ).decode(),
        "$ cat ~/.cloudflared/cert.pem\n-----BEGIN ARGO TUNNEL TOKEN-----\n⟦S⟧\n-----END ARGO TUNNEL TOKEN-----",
    ),
    (
        "circleci_config_environment_npm_token_literal",
        lambda: crc_token("npm_"),
        'jobs:\n  publish:\n    docker:\n      - image: cimg/node:22.2\n    environment:\n      NPM_TOKEN: ⟦S⟧\n    steps:\n      - checkout\n      - run: echo "//registry.npmjs.org/:_authToken=${NPM_TOKEN}" > ~/.npmrc',
    ),
    (
        "woodpecker_cli_secret_add_value_glpat",
        lambda: "glpat-" + rs(20, B64URL),
        "woodpecker-cli repo secret add --repository ⟦ORG⟧/infra --name gitlab_token --value ⟦S⟧ --event push",
    ),
    ("k8s_tls_secret_data_tls_key_base64_pem", None, None),  # special below
    ("openssh_key_terraform_heredoc_local_file", None, None),
    ("ec_private_key_appended_to_nginx_fullchain", None, None),
    ("rsa_pkcs8_python_triple_quoted_constant", None, None),
    ("firebase_admin_private_key_env_escaped_newlines", None, None),
    ("cloud_init_ssh_keys_rsa_private_block", None, None),
    ("dkim_rsa_private_key_provision_script_heredoc", None, None),
    ("terminal_wrapped_openai_key_tmux_capture", None, None),
    ("shell_string_append_split_github_pat", None, None),
    ("aws_secret_key_java_basicawscredentials_ctor", None, None),
    ("aws_secret_key_cyberduck_profile_note", None, None),
    ("aws_secret_key_rclone_s3_env_exports", None, None),
    ("twilio_api_secret_php_client_ctor_positional", None, None),
    ("alibaba_ltai_secret_go_sdk_config_struct", None, None),
    ("modal_token_set_cli_id_and_secret", None, None),
]

CI = [
    (
        "woodpecker_yml_plugin_settings_password_literal",
        "pw",
        "steps:\n  publish:\n    image: woodpeckerci/plugin-docker-buildx\n    settings:\n      registry: registry.⟦ORG⟧.io\n      repo: registry.⟦ORG⟧.io/web\n      username: ci\n      password: ⟦S⟧",
    ),
    (
        "tekton_pipelinerun_params_value_password",
        "pw",
        'apiVersion: tekton.dev/v1\nkind: PipelineRun\nmetadata:\n  generateName: db-migrate-\nspec:\n  pipelineRef:\n    name: migrate\n  params:\n    - name: db-user\n      value: migrator\n    - name: db-password\n      value: "⟦S⟧"',
    ),
    (
        "jenkins_casc_yaml_usernamepassword_literal",
        "pw",
        'credentials:\n  system:\n    domainCredentials:\n      - credentials:\n          - usernamePassword:\n              scope: GLOBAL\n              id: nexus-deploy\n              username: deployment\n              password: "⟦S⟧"',
    ),
    (
        "cloudbuild_yaml_substitutions_db_pass",
        "pw",
        "steps:\n  - name: gcr.io/cloud-builders/docker\n    args: ['build', '--build-arg', 'DB_PASS=${_DB_PASS}', '-t', 'eu.gcr.io/$PROJECT_ID/api', '.']\nsubstitutions:\n  _DB_PASS: '⟦S⟧'",
    ),
    (
        "codebuild_buildspec_env_variables_plain",
        "pw",
        'version: 0.2\nenv:\n  variables:\n    SONAR_HOST: https://sonar.⟦ORG⟧.io\n    DB_PASSWORD: "⟦S⟧"\nphases:\n  build:\n    commands:\n      - ./gradlew test',
    ),
    (
        "semaphore_yml_env_vars_value_password",
        "pw",
        "blocks:\n  - name: Integration\n    task:\n      env_vars:\n        - name: PGPASSWORD\n          value: ⟦S⟧\n      jobs:\n        - name: test\n          commands:\n            - make itest",
    ),
    (
        "gocd_pipeline_yaml_environment_variables_plain",
        "pw",
        "pipelines:\n  deploy-api:\n    group: prod\n    environment_variables:\n      DEPLOY_USER: gocd\n      DEPLOY_PASSWORD: ⟦S⟧\n    materials:\n      git:\n        git: https://git.⟦ORG⟧.io/api.git",
    ),
    (
        "kustomize_secretgenerator_literals_password",
        "pw",
        "secretGenerator:\n  - name: app-db\n    literals:\n      - username=app\n      - password=⟦S⟧\ngeneratorOptions:\n  disableNameSuffixHash: true",
    ),
    (
        "helmfile_yaml_set_value_admin_password",
        "pw",
        "releases:\n  - name: keycloak\n    chart: bitnami/keycloak\n    set:\n      - name: auth.adminUser\n        value: admin\n      - name: auth.adminPassword\n        value: ⟦S⟧",
    ),
    (
        "skaffold_yaml_helm_setvalues_password",
        "pw",
        "deploy:\n  helm:\n    releases:\n      - name: api\n        chartPath: charts/api\n        setValues:\n          postgresql.auth.password: ⟦S⟧\n          image.tag: dev",
    ),
    (
        "nomad_job_env_stanza_literal_password",
        "pw",
        'task "api" {\n  driver = "docker"\n  config { image = "registry.⟦ORG⟧.io/api:1.9" }\n  env {\n    DB_USER     = "api"\n    DB_PASSWORD = "⟦S⟧"\n  }\n}',
    ),
    (
        "gitlab_ci_before_script_docker_login_literal",
        "pw",
        "build:\n  stage: build\n  before_script:\n    - docker login -u deploy-bot -p ⟦S⟧ $CI_REGISTRY\n  script:\n    - docker build -t $CI_REGISTRY_IMAGE:$CI_COMMIT_SHA .",
    ),
    (
        "gha_workflow_dispatch_input_default_password",
        "pw",
        "on:\n  workflow_dispatch:\n    inputs:\n      admin_password:\n        description: 'Initial admin password for the preview env'\n        default: '⟦S⟧'\n        required: true",
    ),
    (
        "flux_helmrelease_values_inline_password",
        "pw",
        'apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: redis\nspec:\n  chart:\n    spec:\n      chart: redis\n  values:\n    auth:\n      enabled: true\n      password: "⟦S⟧"',
    ),
    (
        "dagger_go_setsecret_plaintext_literal",
        "pw",
        'pw := client.SetSecret("db-password", "⟦S⟧")\nctr := client.Container().From("postgres:16").WithSecretVariable("POSTGRES_PASSWORD", pw)',
    ),
    (
        "bitbucket_pipelines_pipe_variables_password",
        "pw",
        "- pipe: atlassian/ftp-deploy:0.7.1\n  variables:\n    USER: 'deploy'\n    PASSWORD: '⟦S⟧'\n    SERVER: 'ftp.⟦ORG⟧.net'\n    REMOTE_PATH: '/public_html'",
    ),
]

RECOVERY_SIMPLE = [
    (
        "microsoft_account_recovery_code_note",
        lambda: "-".join(rs(5, UP + DIG) for _ in range(5)),
        "Microsoft account (⟦USER⟧@outlook.com) recovery code, printed 2025-03-02:\n⟦S⟧",
    ),
    (
        "filevault_personal_recovery_key_ticket",
        lambda: "-".join(rs(4, UP + DIG) for _ in range(6)),
        "IT-⟦N⟧ MacBook Pro (C02⟦HEX8⟧) escrow failed, user read the FileVault personal recovery key over the phone: ⟦S⟧",
    ),
    (
        "tuta_recovery_code_hex_groups",
        lambda: " ".join(hx(4) for _ in range(16)),
        "Tuta recovery code for ops@⟦ORG⟧.eu — keep offline:\n⟦S⟧",
    ),
    (
        "yubikey_piv_change_puk_command",
        lambda: digits(8),
        "ykman piv access change-puk --puk 12345678 --new-puk ⟦S⟧",
    ),
    (
        "router_wps_pin_in_inventory_sheet",
        lambda: digits(8),
        "| Asset | Model | Serial | WPS PIN |\n|---|---|---|---|\n| AP-3 | TP-Link EAP245 | 22⟦N⟧ | ⟦S⟧ |",
    ),
    (
        "garage_keypad_code_handover_email",
        lambda: digits(6),
        "Hi Sam, for the move on Saturday: the loading bay keypad code is ⟦S⟧# and the alarm panel is disarmed from 07:00.",
    ),
    (
        "office_safe_combination_note",
        lambda: "%02d-%02d-%02d" % (R.randint(1, 99), R.randint(1, 99), R.randint(1, 99)),
        "Server room safe (spare YubiKeys + root CA USB) combination: ⟦S⟧ — only Alex and Priya know this.",
    ),
    (
        "voicemail_pin_onboarding_doc",
        lambda: digits(6),
        "### Phones\nYour desk phone extension is ⟦N⟧. Temporary voicemail PIN: ⟦S⟧ (change it on first login).",
    ),
    (
        "ledger_device_pin_in_personal_note",
        lambda: digits(8),
        "treasury ledger nano x — PIN ⟦S⟧, 24 words are in the bank box",
    ),
    (
        "bitwarden_two_step_recovery_code_note",
        lambda: rs(32, UP + DIG),
        "Bitwarden two-step login recovery code (org owner account): ⟦S⟧",
    ),
    (
        "authy_backups_password_in_session_prose",
        pw,
        "User: my Authy backups password is ⟦S⟧ if you need to restore the tokens on the new phone.",
    ),
    (
        "luks_unlock_passphrase_in_kickstart",
        pw,
        "# ks.cfg\npart /boot --fstype=xfs --size=1024\npart pv.01 --size=1 --grow --encrypted --passphrase=⟦S⟧\nvolgroup vg00 pv.01",
    ),
]

SEEDWORDS = (
    "abandon ability able about above absent absorb abstract absurd abuse access accident account "
    "accuse achieve acid acoustic acquire across act action actor actress actual adapt add addict "
    "address adjust admit adult advance advice aerobic affair afford afraid again age agent agree "
    "ahead aim air airport aisle alarm album alcohol alert alien all alley allow almost alone alpha "
    "already also alter always amateur amazing among amount amused analyst anchor ancient anger angle "
    "angry animal ankle announce annual another answer antenna antique anxiety any apart apology "
    "appear apple approve april arch arctic area arena argue arm armed armor army around arrange "
    "arrest arrive arrow art artefact artist artwork ask aspect assault asset assist assume asthma "
    "athlete atom attack attend attitude attract auction audit august aunt author auto autumn average "
    "avocado avoid awake aware away awesome awful awkward axis baby bachelor bacon badge bag balance "
    "balcony ball bamboo banana banner bar barely bargain barrel base basic basket battle beach bean"
).split()


def words(n):
    return " ".join(R.choice(SEEDWORDS) for _ in range(n))


def pem(label, prefix, nbytes):
    body = prefix + base64.b64encode(rbytes(nbytes)).decode()
    lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    return "-----BEGIN %s-----\n%s\n-----END %s-----" % (label, lines, label), lines


def aws_pair():
    return "AKIA" + rs(16, UP + "234567"), rs(40, ALNUM + "+/")


def custom_samples():
    out = []

    def add(kind, text, secret, shape, parts=None):
        d = dict(kind=kind, text=text, secret=secret, shape=shape)
        if parts:
            d["parts"] = parts
        out.append(d)

    # ---- recovery / seeds -------------------------------------------------
    codes = ["%s-%s" % (rs(4, LOW + DIG), rs(4, LOW + DIG)) for _ in range(10)]
    add(
        "discord_backup_codes_txt_pasted_in_session",
        "here are the codes from discord_backup_codes.txt in case the bot account gets locked:\n\n"
        + "\n".join("* %s" % c for c in codes)
        + "\n\n(these can only be used once each)",
        codes[0],
        "context",
        codes,
    )
    s = words(12)
    add(
        "proton_recovery_phrase_in_agent_note",
        "Session note: user asked me to store the Proton Mail recovery phrase for the shared support inbox in the handover file.\nRecovery phrase: %s"
        % s,
        s,
        "context",
    )
    s = words(13)
    add(
        "keybase_paper_key_revoke_transcript",
        "$ keybase device list\n...\n$ keybase paperkey\nHere is your secret paper key phrase:\n\n    %s\n\nWrite it down and keep it somewhere safe."
        % s,
        s,
        "context",
    )
    s = words(25)
    add(
        "monero_wallet_cli_25_word_seed_display",
        "[wallet 4A1b3c]: seed\nNOTE: the following 25 words can be used to recover access to your wallet. Write them down and store them somewhere safe and secure.\n\n%s\n"
        % s,
        s,
        "context",
    )

    # ---- private keys -----------------------------------------------------
    block, body = pem("RSA PRIVATE KEY", "MIIEowIBAAKCAQEA", 1150)
    b = base64.b64encode((block + "\n").encode()).decode()
    add(
        "k8s_tls_secret_data_tls_key_base64_pem",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: shop-tls\n  namespace: ingress\ntype: kubernetes.io/tls\ndata:\n  tls.crt: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUZhekNDQTFPZ0F3SUJBZ0lVZk...\n  tls.key: %s"
        % b,
        b,
        "provider",
    )
    block, body = pem(
        "OPENSSH PRIVATE KEY",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
        300,
    )
    add(
        "openssh_key_terraform_heredoc_local_file",
        'resource "local_sensitive_file" "bastion_key" {\n  filename        = "${path.module}/bastion_ed25519"\n  file_permission = "0600"\n  content         = <<-EOT\n    %s\n  EOT\n}'
        % block.replace("\n", "\n    "),
        body.split("\n")[1],
        "provider",
        body.split("\n"),
    )
    block, body = pem("EC PRIVATE KEY", "MHcCAQEEI", 110)
    cert = (
        "-----BEGIN CERTIFICATE-----\nMIIB"
        + base64.b64encode(rbytes(300)).decode()[:60]
        + "\n-----END CERTIFICATE-----"
    )
    add(
        "ec_private_key_appended_to_nginx_fullchain",
        "$ cat /etc/nginx/ssl/fullchain.pem\n%s\n%s" % (cert, block),
        body.split("\n")[0],
        "provider",
        body.split("\n"),
    )
    block, body = pem("PRIVATE KEY", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ", 1150)
    add(
        "rsa_pkcs8_python_triple_quoted_constant",
        '# tests/conftest.py\nSIGNING_KEY = """%s\n"""\n\n@pytest.fixture\ndef signer():\n    return Signer(SIGNING_KEY)'
        % block,
        body.split("\n")[2],
        "provider",
        body.split("\n"),
    )
    block, body = pem("PRIVATE KEY", "MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQ", 1150)
    esc = block.replace("\n", "\\n")
    inner = esc.split("-----\\n", 1)[1].rsplit("\\n-----", 1)[0]
    add(
        "firebase_admin_private_key_env_escaped_newlines",
        'FIREBASE_PROJECT_ID=%s-app\nFIREBASE_CLIENT_EMAIL=firebase-adminsdk-x1y2z@%s-app.iam.gserviceaccount.com\nFIREBASE_PRIVATE_KEY="%s\\n"'
        % (org(), org(), esc),
        inner,
        "provider",
        inner.split("\\n"),
    )
    block, body = pem("RSA PRIVATE KEY", "MIIEpAIBAAKCAQEA", 1150)
    add(
        "cloud_init_ssh_keys_rsa_private_block",
        "#cloud-config\nssh_keys:\n  rsa_private: |\n    %s\n  rsa_public: ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ%s host@build\n"
        % (block.replace("\n", "\n    "), rs(40)),
        body.split("\n")[3],
        "provider",
        body.split("\n"),
    )
    block, body = pem("RSA PRIVATE KEY", "MIICXAIBAAKBgQ", 600)
    dk = org()
    add(
        "dkim_rsa_private_key_provision_script_heredoc",
        "cat > /etc/opendkim/keys/%s.com/mail.private <<'KEY'\n%s\nKEY\nchown opendkim: /etc/opendkim/keys/%s.com/mail.private"
        % (dk, block, dk),
        body.split("\n")[1],
        "provider",
        body.split("\n"),
    )
    # encrypted key + passphrase (passphrase is the secret)
    blk, _ = pem("ENCRYPTED PRIVATE KEY", "MIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQwwHAQI", 1200)
    p = pw()
    add(
        "encrypted_pkcs8_key_with_passphrase_in_readme",
        "## Signing\nThe release signing key is in `keys/release.p8` (shown below for convenience) and its passphrase is `%s`.\n\n```\n%s\n```"
        % (p, blk[:300] + "\n..."),
        p,
        "context",
    )
    # JWK EC private
    d = base64.urlsafe_b64encode(rbytes(32)).decode().rstrip("=")
    add(
        "jwk_ec_p256_private_d_in_oidc_provider_config",
        '{\n  "issuer": "https://id.%s.io",\n  "signing_keys": [{\n    "kty": "EC", "crv": "P-256", "kid": "2025-06",\n    "x": "%s",\n    "y": "%s",\n    "d": "%s"\n  }]\n}'
        % (
            org(),
            base64.urlsafe_b64encode(rbytes(32)).decode().rstrip("="),
            base64.urlsafe_b64encode(rbytes(32)).decode().rstrip("="),
            d,
        ),
        d,
        "context",
    )
    hs = base64.b64encode(b"== ed25519v1-secret: type0 ==\x00\x00\x00" + rbytes(64)).decode()
    add(
        "tor_hs_ed25519_secret_key_base64_restore_note",
        "To move the onion service to the new box, recreate hs_ed25519_secret_key from this base64 (echo ... | base64 -d > /var/lib/tor/hs/hs_ed25519_secret_key):\n%s"
        % hs,
        hs,
        "context",
    )
    p12 = "MIIK" + base64.b64encode(rbytes(700)).decode()
    add(
        "pkcs12_base64_in_appsettings_json_certificate_field",
        '{\n  "Kestrel": {\n    "Certificates": {\n      "Default": {\n        "Base64": "%s",\n        "Password": ""\n      }\n    }\n  }\n}'
        % p12,
        p12,
        "context",
    )

    # ---- disguised --------------------------------------------------------
    def P():
        return rs(R.randint(14, 18), ALNUM + "!#%*")

    p = P()
    e = "".join("\\x%02x" % ord(c) for c in p)
    add(
        "printf_hex_escapes_password_into_pgpass",
        "printf '%s:5432:*:app:%s\\n' > ~/.pgpass && chmod 600 ~/.pgpass" % (host(), e),
        e,
        "context",
    )
    p = P()
    e = "".join("\\u%04x" % ord(c) for c in p)
    add(
        "java_unicode_escape_sequence_password_literal",
        'private static final String KS_PASS = "%s"; // obfuscated so it does not show in grep' % e,
        e,
        "context",
    )
    p = P()
    e = ", ".join(str(ord(c)) for c in p)
    add(
        "python_chr_map_list_password",
        "DB_PASS = ''.join(map(chr, [%s]))\nconn = psycopg.connect(host='%s', user='etl', password=DB_PASS)"
        % (e, host()),
        e,
        "context",
    )
    p = rs(16, LOW + UP + DIG)
    e = p.translate(str.maketrans(LOW + UP, LOW[13:] + LOW[:13] + UP[13:] + UP[:13]))
    add(
        "python_codecs_rot13_password",
        "import codecs\nSMTP_PASSWORD = codecs.decode('%s', 'rot13')  # not in plain text :)" % e,
        e,
        "context",
    )
    p = P()
    e = p.encode().hex().upper()
    add(
        "mysql_unhex_literal_password_in_insert",
        "INSERT INTO integrations (name, username, secret) VALUES ('sftp_partner', 'acme_drop', UNHEX('%s'));"
        % e,
        e,
        "context",
    )
    p = P()
    cmd = (
        "$p = '%s'; Invoke-Sqlcmd -ServerInstance SQL01 -Username sa -Password $p -Query 'SELECT 1'"
        % p
    )
    e = base64.b64encode(cmd.encode("utf-16-le")).decode()
    add(
        "powershell_encodedcommand_utf16le_base64_password",
        "Scheduled task action:\npowershell.exe -NoProfile -WindowStyle Hidden -EncodedCommand %s"
        % e,
        e,
        "context",
    )
    p = P()
    e = base64.b64encode(
        json.dumps({"user": "svc_report", "password": p, "host": host()}).encode()
    ).decode()
    add(
        "data_uri_base64_json_credentials_in_html",
        '<script id="cfg" src="data:application/json;base64,%s"></script>' % e,
        e,
        "context",
    )
    p = P()
    e = ", ".join(str(ord(c)) for c in p)
    add(
        "go_byte_slice_decimal_literal_password",
        'var dbPass = string([]byte{%s})\n\ndsn := fmt.Sprintf("app:%%s@tcp(%s:3306)/app", dbPass)'
        % (e, host()),
        e,
        "context",
    )
    p = rs(14, ALNUM)
    e = ", ".join("'%s'" % c for c in p)
    add(
        "c_char_array_initializer_password",
        "/* keep out of .rodata strings */\nstatic const char admin_pw[] = { %s, '\\0' };" % e,
        e,
        "context",
    )
    a, b_ = rs(12), rs(12)
    add(
        "env_two_halves_concatenated_in_entrypoint",
        '# entrypoint.sh\nPW_A=%s\nPW_B=%s\nexport PGPASSWORD="${PW_A}${PW_B}"\nexec psql -h %s -U app'
        % (a, b_, host()),
        a,
        "context",
        [a, b_],
    )
    p = rs(18, ALNUM + "!#%")
    c1, c2, c3 = p[:6], p[6:12], p[12:]
    add(
        "chat_password_split_across_three_messages",
        "[14:02] %s: ok sending the router admin pass in pieces\n[14:02] %s: %s\n[14:02] %s: %s\n[14:03] %s: %s\n[14:03] %s: got it, thanks"
        % (user(), "alex", c1, "alex", c2, "alex", c3, "sam"),
        c1,
        "context",
        [c1, c2, c3],
    )
    p = rs(10, ALNUM) + "@" + rs(6, ALNUM) + "#" + rs(3, DIG)
    e = urllib.parse.quote(urllib.parse.quote(p, safe=""), safe="")
    add(
        "url_double_encoded_password_in_sso_redirect_log",
        "%s WARN auth.redirect next=https%%3A%%2F%%2Fapp.%s.io%%2Flogin%%3Fu%%3Dsvc_sync%%26p%%3D%s status=302"
        % (ts(), org(), e),
        e,
        "context",
    )
    p = P()
    e = p.encode().hex()
    add(
        "xxd_reverse_plain_hex_echo_pipe",
        "echo %s | xxd -r -p | sudo cryptsetup open /dev/sdb1 backup --key-file=-" % e,
        e,
        "context",
    )
    p = rs(16, ALNUM)
    e = p[::-1]
    add(
        "ruby_string_reverse_password",
        'FTP_PASS = "%s".reverse # lol security\nNet::FTP.open("ftp.%s.com", "upload", FTP_PASS)'
        % (e, org()),
        e,
        "context",
    )
    p = pw()
    e = base64.b64encode(("svc-export:" + p).encode()).decode()
    add(
        "curl_verbose_authorization_basic_request_line",
        "*   Trying %s:443...\n* Connected to reports.%s.io\n> GET /export.csv HTTP/2\n> Host: reports.%s.io\n> Authorization: Basic %s\n> user-agent: curl/8.5.0\n< HTTP/2 200"
        % (ip(), org(), org(), e),
        e,
        "context",
    )
    k = t_openai_proj()
    k1, k2 = k[:80], k[80:]
    add(
        "terminal_wrapped_openai_key_tmux_capture",
        "$ tmux capture-pane -p | tail -4\n(venv) $ export OPENAI_API_KEY=%s\n%s\n(venv) $ python eval.py --model gpt-4.1"
        % (k1, k2),
        k1,
        "provider",
        [k1, k2],
    )
    t = crc_token("ghp_")
    t1, t2 = t[:20], t[20:]
    add(
        "shell_string_append_split_github_pat",
        'TOKEN="%s"\nTOKEN+="%s"   # split so the scanner does not flag it\ngit clone "https://x-access-token:${TOKEN}@github.com/%s/infra.git"'
        % (t1, t2, org()),
        t1,
        "provider",
        [t1, t2],
    )
    p = pw()
    hdr = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    pl = (
        base64.urlsafe_b64encode(
            json.dumps(
                {"sub": "svc_sync", "pwd": p, "iat": 1718000000}, separators=(",", ":")
            ).encode()
        )
        .decode()
        .rstrip("=")
    )
    add(
        "jwt_payload_embeds_plain_password",
        "Authorization: Bearer %s.%s.%s"
        % (hdr, pl, base64.urlsafe_b64encode(rbytes(32)).decode().rstrip("=")),
        pl,
        "context",
    )
    p = pw()
    add(
        "email_quoted_printable_password_equals_3d",
        "Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n\nHello,\n\nyour SFTP account is ready:\nhost=3Dsftp.%s.com user=3Dpartner42 password=3D%s\n\nRegards,=20\nIT"
        % (org(), p),
        p,
        "context",
    )
    p = pw()
    add(
        "json_log_message_with_escaped_json_password",
        '{"level":"debug","ts":"%s","msg":"webhook payload","body":"{\\"username\\":\\"integration\\",\\"password\\":\\"%s\\"}"}'
        % (ts(), p),
        p,
        "context",
    )

    # ---- special providers (pairs) -----------------------------------------
    kid, sec = aws_pair()
    add(
        "aws_secret_key_java_basicawscredentials_ctor",
        'AWSCredentials creds = new BasicAWSCredentials("%s", "%s");\nAmazonS3 s3 = AmazonS3ClientBuilder.standard().withCredentials(new AWSStaticCredentialsProvider(creds)).build();'
        % (kid, sec),
        sec,
        "provider",
    )
    kid, sec = aws_pair()
    add(
        "aws_secret_key_cyberduck_profile_note",
        "Cyberduck bookmark for the media bucket: server s3.amazonaws.com, Access Key ID %s, Secret Access Key %s (paste when prompted)."
        % (kid, sec),
        sec,
        "provider",
    )
    kid, sec = aws_pair()
    add(
        "aws_secret_key_rclone_s3_env_exports",
        "export RCLONE_CONFIG_MEDIA_TYPE=s3\nexport RCLONE_CONFIG_MEDIA_PROVIDER=AWS\nexport RCLONE_CONFIG_MEDIA_ACCESS_KEY_ID=%s\nexport RCLONE_CONFIG_MEDIA_SECRET_ACCESS_KEY=%s\nrclone sync ./out media:%s-media/out"
        % (kid, sec, org()),
        sec,
        "provider",
    )
    sid, sec = "SK" + hx(32), rs(32)
    add(
        "twilio_api_secret_php_client_ctor_positional",
        "$twilio = new Twilio\\Rest\\Client('%s', '%s', 'AC%s');" % (sid, sec, hx(32)),
        sec,
        "provider",
    )
    kid, sec = "LTAI5t" + rs(18), rs(30)
    add(
        "alibaba_ltai_secret_go_sdk_config_struct",
        'config := &openapi.Config{\n\tAccessKeyId:     tea.String("%s"),\n\tAccessKeySecret: tea.String("%s"),\n\tEndpoint:        tea.String("ecs.cn-hangzhou.aliyuncs.com"),\n}'
        % (kid, sec),
        sec,
        "provider",
    )
    tid, tsec = "ak-" + rs(22), "as-" + rs(22)
    add(
        "modal_token_set_cli_id_and_secret",
        "$ modal token set --token-id %s --token-secret %s --profile=%s\nToken is connected to the %s workspace."
        % (tid, tsec, org(), org()),
        tsec,
        "provider",
    )
    return out


# --------------------------------------------------------------------------
# benign look-alikes: class -> list of template callables (each returns text)
# --------------------------------------------------------------------------
def _pk_stripe():
    return "pk_live_51" + rs(22) + rs(75)


BENIGN = {
    "git_sha_revert_and_cherry_pick": [
        lambda: 'Revert "feat(api): batch writes"\n\nThis reverts commit %s.' % sha40(),
        lambda: "fix(worker): retry on 503\n\n(cherry picked from commit %s)" % sha40(),
        lambda: (
            "$ git bisect good %s\nBisecting: %d revisions left to test after this (roughly %d steps)"
            % (sha40(), R.randint(3, 90), R.randint(2, 7))
        ),
    ],
    "container_image_digest_pin": [
        lambda: (
            "services:\n  db:\n    image: postgres:16.3@sha256:%s\n    environment:\n      POSTGRES_PASSWORD_FILE: /run/secrets/pg_password"
            % hx(64)
        ),
        lambda: (
            "FROM python:3.12-slim@sha256:%s AS base\nRUN pip install --no-cache-dir uv" % hx(64)
        ),
        lambda: (
            "$ crane digest ghcr.io/%s/api:v1.%d.0\nsha256:%s" % (org(), R.randint(1, 30), hx(64))
        ),
    ],
    "lockfile_integrity_and_checksums": [
        lambda: (
            '"node_modules/%s": {\n  "version": "%d.%d.%d",\n  "resolved": "https://registry.npmjs.org/x/-/x.tgz",\n  "integrity": "sha512-%s"\n}'
            % (
                R.choice(["lodash", "zod", "vite", "esbuild"]),
                R.randint(1, 9),
                R.randint(0, 30),
                R.randint(0, 20),
                b64n(64),
            )
        ),
        lambda: (
            "github.com/%s/%s v0.%d.%d h1:%s"
            % (
                org(),
                R.choice(["kit", "log", "retry"]),
                R.randint(1, 20),
                R.randint(0, 9),
                b64n(32),
            )
        ),
        lambda: (
            '[[package]]\nname = "serde"\nversion = "1.0.%d"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\nchecksum = "%s"'
            % (R.randint(150, 220), hx(64))
        ),
    ],
    "request_and_trace_ids_in_logs": [
        lambda: (
            "%s INFO http request_id=%s trace_id=%s span_id=%s status=200 dur=%dms"
            % (ts(), ruuid(), hx(32), hx(16), R.randint(2, 900))
        ),
        lambda: (
            '{"level":"error","msg":"upstream timeout","correlationId":"%s","tenant":"%s"}'
            % (ruuid(), org())
        ),
        lambda: "x-amz-request-id: %s\nx-amz-id-2: %s" % (rs(16, UP + DIG), b64n(48)),
    ],
    "publishable_and_public_client_keys": [
        lambda: "// checkout.ts (browser)\nconst stripe = await loadStripe('%s');" % _pk_stripe(),
        lambda: "mapboxgl.accessToken = 'pk.eyJ1Ijoi%s.%s';" % (rs(40, B64URL), rs(22, B64URL)),
        lambda: "posthog.init('phc_%s', { api_host: 'https://eu.i.posthog.com' })" % rs(43),
        lambda: (
            "LANGFUSE_PUBLIC_KEY=pk-lf-%s\nLANGFUSE_SECRET_KEY=${LANGFUSE_SECRET_KEY}" % ruuid()
        ),
        lambda: (
            "<script>window.Paddle.Initialize({ token: 'live_%s' /* client-side token, safe to expose */ })</script>"
            % hx(27)
        ),
    ],
    "documented_example_credentials": [
        lambda: (
            "From the AWS docs, the example pair is AKIAIOSFODNN7EXAMPLE / wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY; use those in the README instead of real values."
        ),
        lambda: (
            '# tests/fixtures/aws.py — the documented AWS example credentials\nAWS_ACCESS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"\nAWS_SECRET_ACCESS_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"  # case %d'
            % R.randint(1, 999)
        ),
        lambda: (
            "The jwt.io sample token eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c is used in decoder test #%d."
            % R.randint(1, 400)
        ),
    ],
    "placeholders_and_env_references": [
        lambda: (
            "DB_PASSWORD=${DB_PASSWORD:?must be set}\nREDIS_URL=redis://:${REDIS_PASSWORD}@redis:6379/%d"
            % R.randint(0, 9)
        ),
        lambda: (
            '      - name: Login\n        run: echo "${{ secrets.%s }}" | docker login ghcr.io -u ${{ github.actor }} --password-stdin'
            % R.choice(["GHCR_TOKEN", "CR_PAT", "REGISTRY_PASSWORD"])
        ),
        lambda: (
            "  password: {{ .Values.postgresql.auth.password | quote }}  # rendered from %s"
            % R.choice(["values-prod.yaml", "the sealed secret", "external-secrets"])
        ),
        lambda: (
            "export OPENAI_API_KEY=<your-key-here>   # step %d of the quickstart" % R.randint(1, 9)
        ),
        lambda: "smtp_password = %%(SMTP_PASSWORD)s\nsmtp_user = alerts@%s.io" % org(),
        lambda: (
            'api_key: "YOUR_API_KEY"\nbase_url: https://api.%s.dev/v%d' % (org(), R.randint(1, 3))
        ),
    ],
    "masked_and_redacted_values": [
        lambda: (
            "$ gh auth status\ngithub.com\n  ✓ Logged in to github.com account %s (keyring)\n  - Token: gho_************************************"
            % user()
        ),
        lambda: "Key created: sk-proj-...%s (last four shown only)" % rs(4),
        lambda: (
            "  env:\n    DB_PASSWORD: ***\n    API_TOKEN: ***\n##[endgroup]\nRun ./deploy.sh   # run %d"
            % R.randint(1000, 99999)
        ),
        lambda: "spring.datasource.password=******  (masked by actuator, %s)" % ts(),
        lambda: '{"event":"login","user":"%s","password":"[REDACTED]","ip":"%s"}' % (user(), ip()),
    ],
    "secret_store_references": [
        lambda: "DB_PASSWORD=op://%s-prod/postgres-primary/password" % org(),
        lambda: "password: vault:secret/data/%s/db#password" % org(),
        lambda: "valueFrom:\n  secretKeyRef:\n    name: %s-db\n    key: password" % org(),
        lambda: "arn:aws:secretsmanager:eu-west-1:%s:secret:prod/api/db-%s" % (digits(12), rs(6)),
        lambda: (
            "gcloud secrets versions access latest --secret=%s-smtp-password --project=%s-prod"
            % (org(), org())
        ),
        lambda: (
            "@Microsoft.KeyVault(SecretUri=https://kv-%s.vault.azure.net/secrets/SqlPassword/%s)"
            % (org(), hx(32))
        ),
    ],
    "password_prose_without_value": [
        lambda: (
            'The staging DB password is in 1Password under "%s staging / postgres"; ask %s for access.'
            % (org(), user())
        ),
        lambda: (
            "Rotated the SMTP password today (%s). New value is only in Vault, nothing changed in the repo."
            % ts()[:10]
        ),
        lambda: (
            "Das Passwort für den Jenkins-Admin steht im Tresor, nicht im Wiki. Bitte nicht in Tickets kopieren (#%d)."
            % R.randint(10, 999)
        ),
        lambda: (
            "La contraseña del servidor se cambió el %d de junio; pídela por el canal de seguridad."
            % R.randint(1, 28)
        ),
        lambda: (
            "Password policy: minimum %d characters, no reuse of the last 5, rotation every 90 days."
            % R.choice([12, 14, 16])
        ),
        lambda: (
            "User said they forgot the Wi-Fi password for the %s office; pointed them to the IT portal."
            % R.choice(["Lisbon", "Nairobi", "Oslo", "Pune"])
        ),
    ],
    "ssh_public_keys_and_fingerprints": [
        lambda: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI%s %s@laptop" % (rs(43, B64), user()),
        lambda: (
            "ED25519 key fingerprint is SHA256:%s.\nThis key is not known by any other names."
            % rs(43, B64)
        ),
        lambda: (
            "$ gpg --list-keys\npub   ed25519 2024-0%d-1%d [SC]\n      %s\nuid           [ultimate] %s <%s@%s.io>"
            % (R.randint(1, 9), R.randint(0, 9), hx(40).upper(), user(), user(), org())
        ),
    ],
    "public_certificate_blocks": [
        lambda: (
            "$ openssl s_client -connect api.%s.io:443 -showcerts </dev/null 2>/dev/null | sed -n '/BEGIN/,/END/p'\n-----BEGIN CERTIFICATE-----\nMIID%s\n%s\n-----END CERTIFICATE-----"
            % (org(), rs(60, B64), rs(64, B64))
        ),
        lambda: (
            "ca.crt: |\n  -----BEGIN CERTIFICATE-----\n  MIIB%s\n  %s\n  -----END CERTIFICATE-----"
            % (rs(60, B64), rs(40, B64))
        ),
    ],
    "encrypted_at_rest_values": [
        lambda: (
            "db_password: ENC[AES256_GCM,data:%s,iv:%s,tag:%s,type:str]"
            % (rs(20, B64), b64n(32), b64n(16))
        ),
        lambda: (
            "smtp_password: !vault |\n          $ANSIBLE_VAULT;1.1;AES256\n          %s\n          %s"
            % (hx(80), hx(80))
        ),
        lambda: (
            "apiVersion: bitnami.com/v1alpha1\nkind: SealedSecret\nspec:\n  encryptedData:\n    password: AgB%s"
            % rs(120, B64)
        ),
        lambda: '# .travis.yml\nenv:\n  global:\n    - secure: "%s"' % b64n(90),
    ],
    "base64_of_non_secret_data": [
        lambda: (
            "data:\n  nginx.conf: %s"
            % base64.b64encode(
                (
                    "server { listen %d; location / { return 200 'ok'; } }" % R.randint(8000, 9000)
                ).encode()
            ).decode()
        ),
        lambda: (
            "cloud-init user_data = %s"
            % base64.b64encode(
                (
                    "#cloud-config\npackages:\n  - htop\n  - jq\nhostname: node-%d\n"
                    % R.randint(1, 99)
                ).encode()
            ).decode()
        ),
        lambda: (
            lambda n: (
                'echo %s | base64 -d   # -> {"feature": "dark-mode", "rollout": %d}'
                % (
                    base64.b64encode(
                        json.dumps({"feature": "dark-mode", "rollout": n}).encode()
                    ).decode(),
                    n,
                )
            )
        )(R.randint(1, 100)),
        lambda: (
            '<img alt="logo" src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAABAAAAAQ%s">'
            % rs(60, B64)
        ),
    ],
    "versions_build_ids_and_change_ids": [
        lambda: (
            "Bump %s from %d.%d.%d to %d.%d.%d\n\nChange-Id: I%s\nSigned-off-by: %s <%s@%s.io>"
            % (
                R.choice(["tokio", "axios", "pydantic"]),
                1,
                R.randint(0, 9),
                R.randint(0, 9),
                1,
                R.randint(10, 20),
                R.randint(0, 9),
                hx(40),
                user(),
                user(),
                org(),
            )
        ),
        lambda: (
            "version: 3.%d.%d+build.%d (commit %s, built %s)"
            % (R.randint(0, 20), R.randint(0, 9), R.randint(1000, 99999), hx(12), ts())
        ),
        lambda: (
            'Android versionCode %d, versionName "5.%d.%d-rc%d", buildUuid %s'
            % (R.randint(10000, 99999), R.randint(0, 9), R.randint(0, 9), R.randint(1, 4), ruuid())
        ),
    ],
    "provider_object_identifiers": [
        lambda: (
            "Refunded charge for customer cus_%s, payment_intent pi_%s, price price_%s."
            % (rs(14), rs(24), rs(24))
        ),
        lambda: (
            "Twilio message %s sent from account AC%s to +4477009%05d"
            % ("SM" + hx(32), hx(32), R.randint(0, 99999))
        ),
        lambda: (
            "Posted to Slack channel C0%s (thread %d.%06d) in team T0%s"
            % (
                rs(9, UP + DIG),
                R.randint(1718000000, 1719000000),
                R.randint(0, 999999),
                rs(8, UP + DIG),
            )
        ),
        lambda: (
            "Google Analytics G-%s, Tag Manager GTM-%s, Ads AW-%s"
            % (rs(10, UP + DIG), rs(7, UP + DIG), digits(10))
        ),
        lambda: "i-%s in subnet-%s, sg-%s, vpc-%s" % (hx(17), hx(17), hx(17), hx(8)),
    ],
    "content_hashes_and_sri": [
        lambda: (
            '<script src="https://cdn.%s.io/lib.min.js" integrity="sha384-%s" crossorigin="anonymous"></script>'
            % (org(), b64n(48))
        ),
        lambda: (
            "dist/assets/index-%s.js   %d.%d kB │ gzip: %d.%d kB"
            % (
                rs(8, LOW + UP + DIG),
                R.randint(10, 900),
                R.randint(0, 99),
                R.randint(5, 300),
                R.randint(0, 99),
            )
        ),
        lambda: 'ETag: "%s"\nCache-Control: public, max-age=31536000, immutable' % hx(40),
        lambda: (
            "sha256sum release-%d.%d.tar.gz\n%s  release-%d.%d.tar.gz"
            % (2, R.randint(0, 9), hx(64), 2, R.randint(0, 9))
        ),
    ],
    "password_flags_without_values": [
        lambda: (
            'echo "$REGISTRY_TOKEN" | docker login registry.%s.io -u ci --password-stdin' % org()
        ),
        lambda: "mysql -h %s -u app -p   # prompts for the password" % host(),
        lambda: "PGPASSFILE=~/.pgpass psql -h %s -U report -d analytics -c 'select 1'" % host(),
        lambda: "vault kv get -field=password secret/%s/db | pbcopy" % org(),
        lambda: (
            "read -rsp 'Admin password: ' ADMIN_PW && curl -u admin:\"$ADMIN_PW\" https://jenkins.%s.io/api/json"
            % org()
        ),
    ],
    "ids_ulid_ksuid_cid": [
        lambda: (
            "job %s queued (ulid), previous %s"
            % (
                rs(26, "0123456789ABCDEFGHJKMNPQRSTVWXYZ"),
                rs(26, "0123456789ABCDEFGHJKMNPQRSTVWXYZ"),
            )
        ),
        lambda: '"image": "ipfs://bafybei%s"' % rs(52, "abcdefghijklmnopqrstuvwxyz234567"),
        lambda: "segment ksuid=%s bytes=%d" % (rs(27), R.randint(1000, 999999)),
    ],
    "weak_looking_but_non_secret_config": [
        lambda: (
            "PASSWORD_MIN_LENGTH=%d\nPASSWORD_REQUIRE_SYMBOL=true\nSESSION_TTL=%dh"
            % (R.choice([10, 12, 14]), R.choice([8, 12, 24]))
        ),
        lambda: (
            "auth:\n  password_hash_algorithm: argon2id\n  token_ttl: %dm\n  allow_password_login: %s"
            % (R.choice([15, 30, 60]), R.choice(["true", "false"]))
        ),
        lambda: (
            "AUTH_PASSWORD_VALIDATORS = [\n    {'NAME': 'django.contrib.auth.password_validation.MinimumLengthValidator', 'OPTIONS': {'min_length': %d}},\n]"
            % R.choice([9, 10, 12])
        ),
        lambda: (
            "[mysqld]\nvalidate_password.length = %d\nvalidate_password.policy = MEDIUM\nmax_connections = %d"
            % (R.choice([8, 12]), R.choice([151, 300, 500]))
        ),
    ],
}
BENIGN_PER_CLASS = 15


def benign_samples():
    out, seen = [], set()
    for cls, temps in BENIGN.items():
        n, tries = 0, 0
        while n < BENIGN_PER_CLASS and tries < 500:
            tries += 1
            t = temps[(n + tries) % len(temps)]()
            if t in seen:
                continue
            seen.add(t)
            out.append({"source": "heldout11:" + cls, "text": t})
            n += 1
    return out


# --------------------------------------------------------------------------
# assembly + checks
# --------------------------------------------------------------------------
def table_samples():
    out = []
    for group in (CONFIGS, CLI, CODE, LOGS, SQL, COMMITS, CHATS, CI):
        for kind, gname, tmpl in group:
            S = G[gname]()
            out.append(dict(kind=kind, text=fill(tmpl, S), secret=S, shape="context"))
    for kind, gen, tmpl in RECOVERY_SIMPLE:
        S = gen()
        out.append(dict(kind=kind, text=fill(tmpl, S), secret=S, shape="context"))
    for kind, gen, tmpl in PROVIDER_EXTRA:
        if gen is None:
            continue
        S = gen()
        out.append(dict(kind=kind, text=fill(tmpl, S), secret=S, shape="provider"))
    return out


def load_old_kinds():
    """kinds of sets 8/9/10 (only the kind field is read)"""
    kinds = set()
    base = "/work/main/bench/secrets"
    for n in (8, 9, 10):
        path = os.path.join(base, "corpus_heldout%d.jsonl" % n)
        if os.path.exists(path):
            with open(path) as f:
                for line in f:
                    kinds.add(json.loads(line)["kind"])
    return kinds


def main():
    corpus = provider_samples() + table_samples() + custom_samples()
    benign = benign_samples()
    old = load_old_kinds()
    errors = []
    kinds = set()
    for d in corpus:
        k = d["kind"]
        if k in kinds:
            errors.append("duplicate kind " + k)
        kinds.add(k)
        if k in old:
            errors.append("kind used in sets 8-10: " + k)
        if k != k.lower() or not all(c.isalnum() or c == "_" for c in k):
            errors.append("kind not snake_case: " + k)
        if d["secret"] not in d["text"]:
            errors.append("secret not in text: " + k)
        for p in d.get("parts", []):
            if p not in d["text"]:
                errors.append("part not in text: " + k)
        if len(d["secret"]) < 6:
            errors.append("secret too short: " + k)
        if "⟦" in d["text"]:
            errors.append("unfilled marker: " + k)
        if d["shape"] not in ("provider", "context"):
            errors.append("bad shape: " + k)
    btexts = [b["text"] for b in benign]
    if len(set(btexts)) != len(btexts):
        errors.append("benign texts not distinct")
    if errors:
        print("\n".join(errors))
        sys.exit(1)
    with open(os.path.join(HERE, "corpus_heldout11.jsonl"), "w", encoding="utf-8") as f:
        for d in corpus:
            f.write(json.dumps(d, ensure_ascii=False) + "\n")
    with open(os.path.join(HERE, "benign_heldout11.jsonl"), "w", encoding="utf-8") as f:
        for b in benign:
            f.write(json.dumps(b, ensure_ascii=False) + "\n")
    by_shape = {}
    for d in corpus:
        by_shape[d["shape"]] = by_shape.get(d["shape"], 0) + 1
    print("corpus_heldout11.jsonl: %d samples  %s" % (len(corpus), by_shape))
    by_cls = {}
    for b in benign:
        by_cls[b["source"]] = by_cls.get(b["source"], 0) + 1
    print("benign_heldout11.jsonl: %d samples in %d classes" % (len(benign), len(by_cls)))
    for c, n in sorted(by_cls.items()):
        print("  %-50s %d" % (c, n))


if __name__ == "__main__":
    main()
