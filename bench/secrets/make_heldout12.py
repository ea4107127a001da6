# ruff: noqa
"""Generate held-out set 12 for the gitvault secret-redaction filter.

How this was written (blind):
  * Written without reading the filter: nothing under gitvault/ or tests/,
    no bench/secrets/make_*.py, no earlier corpus*/benign* files, no
    bench/secrets/README.md, nothing in /work/set10 or /work/set11, and the
    filter was never run on this output.
  * Read only: the first 3 lines of corpus_heldout11.jsonl and of
    benign_heldout11.jsonl (for the JSONL record format), and the bare `kind`
    values of corpus_heldout8..11 so that every kind here is new.
  * Token shapes come from public vendor documentation / common knowledge of
    public token formats.  Where a vendor publishes a checksum the value
    carries a valid one (GitHub / npm CRC32-base62 tails, age bech32,
    Bitcoin WIF base58check).  Every value is random and opens nothing.

Output (next to this file):
  corpus_heldout12.jsonl  {"kind", "text", "secret", "shape"[, "parts"]}
  benign_heldout12.jsonl  {"source": "heldout12:<class>", "text"}

About half of the corpus is everyday leaks (.env, compose, k8s, CI, connection
strings, curl, code assignments, chat / session notes in many languages, logs
and stack traces); the other half is the long tail (rarer vendors, CLIs,
config formats, recovery material, encodings, split values).

Standard library only; deterministic (single random.Random seeded below).
"""

import base64
import hashlib
import json
import os
import random
import urllib.parse
import zlib

R = random.Random(120512)

HERE = os.path.dirname(os.path.abspath(__file__))

# ---------------------------------------------------------------- alphabets
DIG = "0123456789"
UP = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
LO = "abcdefghijklmnopqrstuvwxyz"
ALNUM = DIG + UP + LO
B62 = DIG + UP + LO
HEX = "0123456789abcdef"
UHEX = "0123456789ABCDEF"
B64 = UP + LO + DIG + "+/"
B64URL = UP + LO + DIG + "-_"
LALNUM = LO + DIG
UALNUM = UP + DIG
B32 = UP + "234567"


def rs(alpha, n):
    return "".join(R.choice(alpha) for _ in range(n))


def b62(num, width):
    out = ""
    while num:
        num, r = divmod(num, 62)
        out = B62[r] + out
    return out.rjust(width, "0")


def crc_tail(body):
    return b62(zlib.crc32(body.encode()) & 0xFFFFFFFF, 6)


def b64(data):
    return base64.b64encode(data).decode()


def b64url_nopad(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


# ------------------------------------------------------------ bech32 (age)
BECH = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


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
    acc, bits, data5 = 0, 0, []
    for b in data8:
        acc = (acc << 8) | b
        bits += 8
        while bits >= 5:
            bits -= 5
            data5.append((acc >> bits) & 31)
    if bits:
        data5.append((acc << (5 - bits)) & 31)
    hx = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]
    pm = _polymod(hx + data5 + [0] * 6) ^ 1
    chk = [(pm >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(BECH[d] for d in data5 + chk)


# ------------------------------------------------------- base58check (WIF)
B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def b58check(payload):
    full = payload + hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4]
    n = int.from_bytes(full, "big")
    out = ""
    while n:
        n, r = divmod(n, 58)
        out = B58[r] + out
    pad = len(full) - len(full.lstrip(b"\0"))
    return "1" * pad + out


# ------------------------------------------------------- token generators
def ghp(prefix="ghp_"):
    body = rs(B62, 30)
    return prefix + body + crc_tail(body)


def github_fg():
    return "github_pat_11" + rs(UALNUM, 20) + "_" + rs(ALNUM, 59)


def npm_tok():
    body = rs(B62, 30)
    return "npm_" + body + crc_tail(body)


def glpat():
    return "glpat-" + rs(ALNUM + "-_", 20)


def slack_bot():
    return "xoxb-%s-%s-%s" % (rs(DIG, 12), rs(DIG, 13), rs(ALNUM, 24))


def slack_user():
    return "xoxp-%s-%s-%s-%s" % (rs(DIG, 12), rs(DIG, 12), rs(DIG, 13), rs(HEX, 32))


def slack_app():
    return "xapp-1-A%s-%s-%s" % (rs(UALNUM, 10), rs(DIG, 13), rs(HEX, 64))


def stripe_sk():
    return "sk_live_51" + rs(ALNUM, 97)


def stripe_rk():
    return "rk_live_51" + rs(ALNUM, 97)


def stripe_whsec():
    return "whsec_" + rs(ALNUM, 32)


def akia():
    return "AKIA" + rs(B32, 16)


def aws_secret():
    return rs(UP + LO + DIG + "+/", 40)


def openai_key():
    return "sk-proj-" + rs(B64URL, 74) + "T3BlbkFJ" + rs(B64URL, 74)


def openai_svcacct():
    return "sk-svcacct-" + rs(B64URL, 74) + "T3BlbkFJ" + rs(B64URL, 74)


def anthropic_key():
    return "sk-ant-api03-" + rs(B64URL, 93) + "AA"


def sendgrid():
    return "SG." + rs(B64URL, 22) + "." + rs(B64URL, 43)


def hf_tok():
    return "hf_" + rs(UP + LO, 34)


def do_pat():
    return "dop_v1_" + rs(HEX, 64)


def vault_tok():
    return "hvs." + rs(ALNUM, 24)


def linear_key():
    return "lin_api_" + rs(ALNUM, 40)


def databricks():
    return "dapi" + rs(HEX, 32)


def grafana_sa():
    return "glsa_" + rs(ALNUM, 32) + "_" + rs(HEX, 8)


def groq_key():
    return "gsk_" + rs(ALNUM, 52)


def supabase_pat():
    return "sbp_" + rs(HEX, 40)


def dockerhub_pat():
    return "dckr_pat_" + rs(B64URL, 27)


def pulumi_tok():
    return "pul-" + rs(HEX, 40)


def replicate_tok():
    return "r8_" + rs(ALNUM, 37)


def shopify_tok():
    return "shpat_" + rs(HEX, 32)


def newrelic_key():
    return "NRAK-" + rs(UALNUM, 27)


def sentry_user():
    return "sntryu_" + rs(HEX, 64)


def resend_key():
    return "re_" + rs(ALNUM, 8) + "_" + rs(ALNUM, 24)


def openrouter_key():
    return "sk-or-v1-" + rs(HEX, 64)


def langsmith_key():
    return "lsv2_pt_" + rs(HEX, 32) + "_" + rs(HEX, 10)


def pplx_key():
    return "pplx-" + rs(ALNUM, 48)


def pinecone_key():
    return "pcsk_" + rs(ALNUM, 6) + "_" + rs(ALNUM, 64)


def xai_key():
    return "xai-" + rs(ALNUM, 80)


def postman_key():
    return "PMAK-" + rs(HEX, 24) + "-" + rs(HEX, 34)


def tailscale_key():
    return "tskey-auth-k" + rs(ALNUM, 10) + "CNTRL-" + rs(ALNUM, 33)


def pypi_tok():
    return "pypi-AgEIcHlwaS5vcmc" + rs(B64URL, 150)


def google_api_key():
    return "AIza" + rs(B64URL, 35)


def gocspx():
    return "GOCSPX-" + rs(B64URL, 28)


def azure_ad_secret():
    return rs(ALNUM, 3) + "8Q~" + rs(ALNUM + "~_.-", 34)


def atlassian_tok():
    return "ATATT3xFfGF0" + rs(B64URL, 170) + "=" + rs(UHEX, 8)


def twilio_sk():
    return "SK" + rs(HEX, 32)


def jwt(payload):
    h = b64url_nopad(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    p = b64url_nopad(json.dumps(payload, separators=(",", ":")).encode())
    return h + "." + p + "." + rs(B64URL, 43)


def age_key():
    return bech32("age-secret-key-", bytes(R.getrandbits(8) for _ in range(32))).upper()


def btc_wif():
    return b58check(b"\x80" + bytes(R.getrandbits(8) for _ in range(32)) + b"\x01")


def discord_bot():
    snow = str(R.randint(10**17, 10**18 - 1))
    return b64url_nopad(snow.encode()) + "." + rs(B64URL, 6) + "." + rs(B64URL, 38)


def telegram_bot():
    return "%d:AA%s" % (R.randint(5 * 10**8, 7 * 10**9), rs(B64URL, 33))


def pem_body(lines=12, width=64):
    return "\n".join(rs(B64, width) for _ in range(lines)) + "\n" + rs(B64, 28) + "=="


# --------------------------------------------------- human-ish passwords
WORDS = [
    "harbor",
    "kestrel",
    "granite",
    "maple",
    "orbit",
    "lantern",
    "cobalt",
    "meadow",
    "falcon",
    "quartz",
    "willow",
    "ember",
    "tundra",
    "saffron",
    "juniper",
    "glacier",
    "pepper",
    "violet",
    "canyon",
    "raven",
    "thistle",
    "copper",
    "marble",
    "sierra",
    "otter",
    "nimbus",
    "cedar",
    "fjord",
]
SYM = "!@#%^*-_+=?"


def pw():
    style = R.randrange(5)
    if style == 0:
        return "-".join(R.choice(WORDS).capitalize() for _ in range(3)) + str(R.randint(10, 9999))
    if style == 1:
        return (
            rs(ALNUM, R.randint(4, 8))
            + R.choice(SYM)
            + rs(ALNUM, R.randint(8, 12))
            + R.choice(SYM)
            + rs(DIG, 2)
        )
    if style == 2:
        return rs(ALNUM, R.choice([20, 24, 32]))
    if style == 3:
        return (
            R.choice(WORDS).capitalize()
            + R.choice(SYM)
            + rs(DIG, 4)
            + R.choice(WORDS)
            + R.choice(SYM)
        )
    return rs(ALNUM + "!#%*", 18)


def pw_nosym():
    return rs(ALNUM, R.choice([18, 22, 26]))


def hex_secret(n=64):
    return rs(HEX, n)


def b64_secret(nbytes=32):
    return b64(bytes(R.getrandbits(8) for _ in range(nbytes)))


def django_key():
    return rs(LO + DIG + "!@#$%^&*(-_=+)", 50).replace("$", "%")


def uuid4():
    h = rs(HEX, 32)
    return "%s-%s-4%s-%s%s-%s" % (h[:8], h[8:12], h[13:16], R.choice("89ab"), h[17:20], h[20:32])


# -------------------------------------------------------------- recorders
CORPUS = []
KINDS = set()


def add(kind, text, secret, shape, parts=None):
    assert kind not in KINDS, kind
    assert shape in ("provider", "context")
    assert secret in text, (kind, secret)
    rec = {"kind": kind, "text": text, "secret": secret, "shape": shape}
    if parts:
        for p in parts:
            assert p in text, (kind, p)
        rec["parts"] = parts
    KINDS.add(kind)
    CORPUS.append(rec)


# ====================================================================
# A. everyday: environment-style containers x credentials
# ====================================================================
PROVIDER_CREDS = [
    ("github_classic_pat", "GITHUB_TOKEN", ghp),
    ("github_fine_grained_pat", "GH_PAT", github_fg),
    ("gitlab_pat", "GITLAB_TOKEN", glpat),
    ("slack_bot_token", "SLACK_BOT_TOKEN", slack_bot),
    ("stripe_live_secret", "STRIPE_SECRET_KEY", stripe_sk),
    ("openai_project_key", "OPENAI_API_KEY", openai_key),
    ("anthropic_key", "ANTHROPIC_API_KEY", anthropic_key),
    ("sendgrid_key", "SENDGRID_API_KEY", sendgrid),
    ("npm_granular_token", "NPM_TOKEN", npm_tok),
    ("huggingface_token", "HF_TOKEN", hf_tok),
    ("digitalocean_pat", "DIGITALOCEAN_ACCESS_TOKEN", do_pat),
    ("vault_hvs_token", "VAULT_TOKEN", vault_tok),
    ("linear_key", "LINEAR_API_KEY", linear_key),
    ("databricks_pat", "DATABRICKS_TOKEN", databricks),
    ("grafana_glsa", "GRAFANA_SERVICE_ACCOUNT_TOKEN", grafana_sa),
    ("groq_key", "GROQ_API_KEY", groq_key),
    ("supabase_sbp", "SUPABASE_ACCESS_TOKEN", supabase_pat),
    ("dockerhub_pat", "DOCKERHUB_TOKEN", dockerhub_pat),
    ("pulumi_token", "PULUMI_ACCESS_TOKEN", pulumi_tok),
    ("replicate_token", "REPLICATE_API_TOKEN", replicate_tok),
    ("shopify_shpat", "SHOPIFY_ADMIN_API_TOKEN", shopify_tok),
    ("newrelic_nrak", "NEW_RELIC_API_KEY", newrelic_key),
    ("sentry_user_token", "SENTRY_AUTH_TOKEN", sentry_user),
    ("resend_key", "RESEND_API_KEY", resend_key),
    ("openrouter_key", "OPENROUTER_API_KEY", openrouter_key),
    ("langsmith_key", "LANGSMITH_API_KEY", langsmith_key),
    ("perplexity_key", "PERPLEXITY_API_KEY", pplx_key),
    ("pinecone_key", "PINECONE_API_KEY", pinecone_key),
    ("xai_key", "XAI_API_KEY", xai_key),
    ("postman_key", "POSTMAN_API_KEY", postman_key),
    ("tailscale_authkey", "TS_AUTHKEY", tailscale_key),
    ("stripe_webhook_whsec", "STRIPE_WEBHOOK_SECRET", stripe_whsec),
]
CONTEXT_CREDS = [
    ("postgres_password", "POSTGRES_PASSWORD", pw),
    ("mysql_root_password", "MYSQL_ROOT_PASSWORD", pw),
    ("redis_password", "REDIS_PASSWORD", pw_nosym),
    ("rabbitmq_pass", "RABBITMQ_DEFAULT_PASS", pw),
    ("django_secret", "DJANGO_SECRET_KEY", django_key),
    ("jwt_hs256_secret", "JWT_SECRET", hex_secret),
    ("nextauth_secret", "NEXTAUTH_SECRET", b64_secret),
    ("smtp_password", "SMTP_PASSWORD", pw),
    ("aws_secret_key", "AWS_SECRET_ACCESS_KEY", aws_secret),
    ("datadog_api_key", "DD_API_KEY", lambda: hex_secret(32)),
    ("cloudflare_api_token", "CLOUDFLARE_API_TOKEN", lambda: rs(B64URL, 40)),
    ("minio_root_password", "MINIO_ROOT_PASSWORD", pw),
    ("keycloak_admin_password", "KEYCLOAK_ADMIN_PASSWORD", pw),
    ("grafana_admin_password", "GF_SECURITY_ADMIN_PASSWORD", pw),
    ("elastic_password", "ELASTIC_PASSWORD", pw_nosym),
    ("mongo_root_password", "MONGO_INITDB_ROOT_PASSWORD", pw),
    ("app_encryption_key", "APP_ENCRYPTION_KEY", b64_secret),
    ("webhook_hmac_secret", "WEBHOOK_SIGNING_SECRET", hex_secret),
    ("ldap_bind_password", "LDAP_BIND_PASSWORD", pw),
    ("oidc_client_secret", "OIDC_CLIENT_SECRET", lambda: rs(ALNUM, 32)),
    ("mistral_key", "MISTRAL_API_KEY", lambda: rs(ALNUM, 32)),
    ("cohere_key", "COHERE_API_KEY", lambda: rs(ALNUM, 40)),
    ("wandb_key", "WANDB_API_KEY", lambda: hex_secret(40)),
    ("session_secret", "SESSION_SECRET", lambda: rs(ALNUM, 48)),
    ("admin_password", "ADMIN_PASSWORD", pw),
    ("s3_secret_key", "S3_SECRET_KEY", aws_secret),
    ("sftp_password", "SFTP_PASSWORD", pw),
    ("clickhouse_password", "CLICKHOUSE_PASSWORD", pw_nosym),
    ("twilio_auth_token", "TWILIO_AUTH_TOKEN", lambda: hex_secret(32)),
    ("mailgun_signing_key", "MAILGUN_WEBHOOK_SIGNING_KEY", lambda: hex_secret(32)),
]


def lower(env):
    return env.lower()


ENV_CONTAINERS = []


def container(name):
    def deco(fn):
        ENV_CONTAINERS.append((name, fn))
        return fn

    return deco


@container("dotenv_local_with_comments")
def _c(env, v):
    return (
        "# local overrides -- do not commit\nNODE_ENV=development\nPORT=3000\n"
        "LOG_LEVEL=debug\n%s=%s\nFEATURE_NEW_CHECKOUT=true\n" % (env, v)
    )


@container("compose_environment_list")
def _c(env, v):
    return (
        "services:\n  api:\n    image: ghcr.io/acme/api:1.14.2\n    environment:\n"
        '      - TZ=UTC\n      - %s=%s\n      - WORKERS=4\n    ports:\n      - "8080:8080"\n'
        % (env, v)
    )


@container("compose_environment_mapping")
def _c(env, v):
    return (
        "  worker:\n    build: ./worker\n    depends_on: [db, queue]\n    environment:\n"
        '      QUEUE_URL: amqp://queue:5672\n      %s: "%s"\n      CONCURRENCY: "8"\n' % (env, v)
    )


@container("k8s_secret_stringdata_manifest")
def _c(env, v):
    return (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: api-env\n  namespace: payments\n"
        "type: Opaque\nstringData:\n  %s: %s\n" % (env, v)
    )


@container("gha_job_env_literal")
def _c(env, v):
    return (
        "jobs:\n  deploy:\n    runs-on: ubuntu-latest\n    env:\n      %s: %s\n"
        "    steps:\n      - uses: actions/checkout@v4\n      - run: make deploy\n" % (env, v)
    )


@container("gitlab_ci_global_variables")
def _c(env, v):
    return (
        'variables:\n  DOCKER_DRIVER: overlay2\n  %s: "%s"\n\nstages: [build, test, release]\n'
        % (env, v)
    )


@container("dockerfile_env_instruction")
def _c(env, v):
    return (
        "FROM python:3.12-slim\nWORKDIR /app\nENV PYTHONUNBUFFERED=1 \\\n    %s=%s\n"
        'COPY . .\nRUN pip install -r requirements.txt\nCMD ["gunicorn", "app:app"]\n' % (env, v)
    )


@container("zshrc_export_line")
def _c(env, v):
    return (
        "# >>> work stuff >>>\nexport PATH=\"$HOME/.local/bin:$PATH\"\nexport %s='%s'\nalias k=kubectl\n"
        % (env, v)
    )


@container("fish_config_set_gx")
def _c(env, v):
    return "# ~/.config/fish/config.fish\nset -gx EDITOR nvim\nset -gx %s %s\n" % (env, v)


@container("powershell_profile_env_drive")
def _c(env, v):
    return '# Microsoft.PowerShell_profile.ps1\nSet-Alias g git\n$env:%s = "%s"\n' % (env, v)


@container("systemd_unit_environment_line")
def _c(env, v):
    return (
        '[Service]\nUser=app\nWorkingDirectory=/srv/app\nEnvironment="%s=%s"\n'
        "ExecStart=/srv/app/bin/server\nRestart=on-failure\n" % (env, v)
    )


@container("heroku_config_set_cli")
def _c(env, v):
    return (
        "$ heroku config:set %s=%s -a acme-prod\nSetting %s and restarting acme-prod... done, v312\n"
        % (env, v, env)
    )


@container("flyctl_secrets_set")
def _c(env, v):
    return (
        "$ fly secrets set %s=%s --app acme-edge\nUpdating existing machines in 'acme-edge' with rolling strategy\n"
        % (env, v)
    )


@container("kubectl_create_secret_from_literal")
def _c(env, v):
    return (
        "kubectl -n staging create secret generic api-env \\\n  --from-literal=%s='%s' \\\n"
        "  --dry-run=client -o yaml | kubectl apply -f -\n" % (env, v)
    )


@container("docker_run_e_flag")
def _c(env, v):
    return "docker run --rm -it -p 8000:8000 -e %s=%s -v $PWD:/app acme/api:dev\n" % (env, v)


@container("terraform_tfvars_assignment")
def _c(env, v):
    return 'region       = "eu-west-1"\ninstance_type = "t3.small"\n%s = "%s"\n' % (lower(env), v)


@container("helm_values_override")
def _c(env, v):
    return (
        '# values-prod.yaml\nreplicaCount: 3\nimage:\n  tag: "2.8.0"\nextraEnv:\n'
        '  - name: %s\n    value: "%s"\n' % (env, v)
    )


@container("direnv_envrc")
def _c(env, v):
    return "# .envrc\nuse flake\nlayout python3\nexport %s=%s\n" % (env, v)


@container("vscode_launch_config_env")
def _c(env, v):
    return (
        '{\n  "version": "0.2.0",\n  "configurations": [\n    {\n      "name": "Debug API",\n'
        '      "type": "debugpy",\n      "request": "launch",\n      "module": "uvicorn",\n'
        '      "env": { "%s": "%s" }\n    }\n  ]\n}\n' % (env, v)
    )


@container("jenkinsfile_environment_block")
def _c(env, v):
    return (
        "pipeline {\n  agent any\n  environment {\n    %s = '%s'\n  }\n  stages {\n"
        "    stage('Test') { steps { sh 'make test' } }\n  }\n}\n" % (env, v)
    )


@container("azure_pipelines_variables_block")
def _c(env, v):
    return (
        "trigger:\n- main\npool:\n  vmImage: ubuntu-latest\nvariables:\n  buildConfiguration: Release\n"
        "  %s: '%s'\n" % (env, v)
    )


@container("makefile_variable_assignment")
def _c(env, v):
    return "%s ?= %s\n\ndeploy:\n\t./scripts/deploy.sh --env prod\n" % (env, v)


@container("python_os_environ_setitem")
def _c(env, v):
    return (
        'import os\n\n# quick hack for local runs\nos.environ["%s"] = "%s"\n\nfrom app import main\nmain()\n'
        % (env, v)
    )


@container("jest_setup_process_env")
def _c(env, v):
    return "// jest.setup.ts\nprocess.env.TZ = 'UTC';\nprocess.env.%s = '%s';\n" % (env, v)


@container("agent_ran_env_sort_output")
def _c(env, v):
    return (
        "$ env | sort | head -n 8\nHOME=/home/dev\nHOSTNAME=devbox-3\nLANG=C.UTF-8\n%s=%s\n"
        "PATH=/usr/local/bin:/usr/bin:/bin\nPWD=/workspace\nSHELL=/bin/bash\n" % (env, v)
    )


@container("docker_inspect_config_env_json")
def _c(env, v):
    return (
        "$ docker inspect api-1 --format '{{json .Config.Env}}'\n"
        '["PATH=/usr/local/sbin:/usr/local/bin","%s=%s","PYTHON_VERSION=3.12.4"]\n' % (env, v)
    )


@container("ecs_task_definition_environment")
def _c(env, v):
    return (
        '"containerDefinitions": [{\n  "name": "api",\n  "image": "123456789012.dkr.ecr.eu-west-1.amazonaws.com/api:latest",\n'
        '  "environment": [\n    {"name": "STAGE", "value": "prod"},\n    {"name": "%s", "value": "%s"}\n  ]\n}]\n'
        % (env, v)
    )


@container("gcloud_run_set_env_vars")
def _c(env, v):
    return (
        "gcloud run deploy api --region europe-west1 --image gcr.io/acme/api \\\n"
        "  --set-env-vars=STAGE=prod,%s=%s\n" % (env, v)
    )


@container("nomad_job_env_stanza")
def _c(env, v):
    return (
        'task "api" {\n  driver = "docker"\n  env {\n    STAGE = "prod"\n    %s = "%s"\n  }\n}\n'
        % (env, v)
    )


@container("ansible_group_vars_plain")
def _c(env, v):
    return '# group_vars/prod.yml\napp_user: deploy\napp_port: 8080\n%s: "%s"\n' % (lower(env), v)


@container("supervisord_program_environment")
def _c(env, v):
    return (
        "[program:worker]\ncommand=/srv/venv/bin/celery -A app worker\n"
        'environment=STAGE="prod",%s="%s"\nautorestart=true\n' % (env, v)
    )


@container("tox_ini_setenv")
def _c(env, v):
    return (
        "[testenv:integration]\ndeps = -rrequirements-dev.txt\nsetenv =\n    %s = %s\n"
        "commands = pytest -m integration\n" % (env, v)
    )


@container("conda_env_config_vars_set")
def _c(env, v):
    return (
        "(ml) $ conda env config vars set %s=%s\nTo make your changes take effect please reactivate your environment\n"
        % (env, v)
    )


@container("windows_setx_command")
def _c(env, v):
    return 'C:\\Users\\dev> setx %s "%s"\n\nSUCCESS: Specified value was saved.\n' % (env, v)


@container("git_diff_added_env_line")
def _c(env, v):
    return (
        "diff --git a/.env.staging b/.env.staging\nindex 3f2a1c9..8b0d7e4 100644\n--- a/.env.staging\n+++ b/.env.staging\n"
        "@@ -3,3 +3,4 @@ API_BASE=https://staging.acme.dev\n LOG_LEVEL=info\n+%s=%s\n CACHE_TTL=300\n"
        % (env, v)
    )


@container("render_yaml_envvars")
def _c(env, v):
    return (
        "services:\n  - type: web\n    name: api\n    env: node\n    envVars:\n      - key: %s\n        value: %s\n"
        % (env, v)
    )


@container("launchctl_setenv_session")
def _c(env, v):
    return "$ launchctl setenv %s %s\n$ launchctl getenv %s\n%s\n" % (env, v, env, v)


def section_env():
    for cname, fn in ENV_CONTAINERS:
        prov = R.sample(PROVIDER_CREDS, 2)
        ctx = R.sample(CONTEXT_CREDS, 2)
        picks = [(p, "provider") for p in prov[: R.choice([1, 1, 2])]] + [
            (c, "context") for c in ctx
        ]
        for (cred, env, gen), shape in picks:
            v = gen()
            add("%s__%s" % (cred, cname), fn(env, v), v, shape)


# ====================================================================
# B. everyday: connection strings (context)
# ====================================================================
def section_dsn():
    p = pw_nosym()
    add(
        "dsn_postgres_url_in_dotenv_database_url",
        "DATABASE_URL=postgresql://app_rw:%s@pg-main.internal:5432/orders?sslmode=require\nREDIS_URL=redis://cache:6379/0\n"
        % p,
        p,
        "context",
    )
    p = pw_nosym()
    add(
        "dsn_mysql_rails_database_yml_url",
        "production:\n  <<: *default\n  url: mysql2://shop:%s@mysql-prod.cluster-abc.eu-west-1.rds.amazonaws.com/shop_production\n"
        % p,
        p,
        "context",
    )
    p = pw_nosym()
    add(
        "dsn_mongodb_srv_in_mongoose_connect",
        "await mongoose.connect('mongodb+srv://reporting:%s@cluster0.x1y2z.mongodb.net/analytics?retryWrites=true&w=majority');\n"
        % p,
        p,
        "context",
    )
    p = pw_nosym()
    add(
        "dsn_rediss_password_only_userinfo",
        'CACHE_URL = "rediss://:%s@master.prod-cache.abc123.euw1.cache.amazonaws.com:6379/2"\n' % p,
        p,
        "context",
    )
    p = pw_nosym()
    add(
        "dsn_amqp_celery_broker_url",
        "# celeryconfig.py\nbroker_url = 'amqp://celery:%s@rabbit.internal:5672/jobs'\nresult_backend = 'rpc://'\n"
        % p,
        p,
        "context",
    )
    p = pw()
    add(
        "dsn_spring_datasource_password_property",
        "spring.datasource.url=jdbc:postgresql://db:5432/billing\nspring.datasource.username=billing\nspring.datasource.password=%s\nspring.jpa.hibernate.ddl-auto=validate\n"
        % p,
        p,
        "context",
    )
    p = pw_nosym()
    add(
        "dsn_sqlserver_appsettings_connectionstrings",
        '{\n  "ConnectionStrings": {\n    "Default": "Server=tcp:acme-sql.database.windows.net,1433;Initial Catalog=crm;User ID=crm_app;Password=%s;Encrypt=True;"\n  },\n  "Logging": { "LogLevel": { "Default": "Information" } }\n}\n'
        % p,
        p,
        "context",
    )
    raw = rs(ALNUM, 6) + "@" + rs(ALNUM, 5) + "/" + rs(ALNUM, 6) + "#" + rs(DIG, 3)
    enc = urllib.parse.quote(raw, safe="")
    add(
        "dsn_sqlalchemy_url_percent_encoded_password",
        'engine = create_engine("postgresql+psycopg://etl:%s@warehouse.internal:5432/dwh", pool_pre_ping=True)\n'
        % enc,
        enc,
        "context",
    )
    p = pw_nosym()
    add(
        "dsn_oracle_sqlplus_easy_connect",
        "$ sqlplus hr/%s@//ora-prod.internal:1521/ORCLPDB1 @migrate.sql\n\nSQL*Plus: Release 19.0.0.0.0 - Production\n"
        % p,
        p,
        "context",
    )
    p = pw_nosym()
    add(
        "dsn_kafka_sasl_jaas_config_property",
        'security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="ingest" password="%s";\n'
        % p,
        p,
        "context",
    )
    p = pw_nosym()
    add(
        "dsn_elasticsearch_https_userinfo_in_python",
        'es = Elasticsearch("https://elastic:%s@es01.logging.internal:9200", verify_certs=False)\n'
        % p,
        p,
        "context",
    )
    p = pw_nosym()
    add(
        "dsn_go_mysql_driver_tcp_dsn",
        'dsn := "api:%s@tcp(10.0.4.12:3306)/inventory?parseTime=true&loc=UTC"\ndb, err := sql.Open("mysql", dsn)\n'
        % p,
        p,
        "context",
    )
    p = pw_nosym()
    add(
        "dsn_libpq_keyword_value_string",
        'conn = psycopg2.connect("host=10.2.0.7 port=5432 dbname=ledger user=ledger_ro password=%s sslmode=verify-full")\n'
        % p,
        p,
        "context",
    )
    p = pw_nosym()
    add(
        "dsn_npgsql_semicolon_string_in_csharp",
        'var cs = "Host=pg.internal;Database=tickets;Username=tickets;Password=%s;Pooling=true";\nawait using var conn = new NpgsqlConnection(cs);\n'
        % p,
        p,
        "context",
    )
    p = pw_nosym()
    add(
        "dsn_nats_url_userinfo_in_go",
        'nc, err := nats.Connect("nats://orders:%s@nats-0.nats.svc:4222")\n' % p,
        p,
        "context",
    )
    p = pw_nosym()
    add(
        "dsn_neo4j_bolt_auth_tuple",
        'driver = GraphDatabase.driver("neo4j+s://a1b2c3d4.databases.neo4j.io", auth=("neo4j", "%s"))\n'
        % p,
        p,
        "context",
    )
    p = pw_nosym()
    add(
        "dsn_dbt_profiles_yml_snowflake_password",
        "acme:\n  target: prod\n  outputs:\n    prod:\n      type: snowflake\n      account: xy12345.eu-central-1\n      user: DBT_PROD\n      password: %s\n      role: TRANSFORMER\n      warehouse: TRANSFORMING\n"
        % p,
        p,
        "context",
    )
    p = pw_nosym()
    add(
        "dsn_clickhouse_client_password_flag",
        "$ clickhouse-client --host ch.internal --user analyst --password %s --query 'SELECT count() FROM events'\n48211933\n"
        % p,
        p,
        "context",
    )
    p = pw_nosym()
    add(
        "dsn_lftp_ftp_url_with_password",
        "lftp -e 'mirror -R ./dist /public_html; bye' ftp://webmaster:%s@ftp.acme-legacy.com\n" % p,
        p,
        "context",
    )
    p = pw()
    add(
        "dsn_cifs_credentials_file",
        "# /etc/samba/creds-nas\nusername=backup\npassword=%s\ndomain=ACME\n" % p,
        p,
        "context",
    )
    p = pw_nosym()
    add(
        "dsn_prisma_env_mysql_planetscale_style",
        'DATABASE_URL="mysql://k2x9:%s@aws.connect.psdb.cloud/storefront?sslaccept=strict"\n' % p,
        p,
        "context",
    )


# ====================================================================
# C. everyday: curl / HTTP clients
# ====================================================================
def section_http():
    t = openai_key()
    add(
        "curl_openai_chat_completions_bearer",
        'curl https://api.openai.com/v1/chat/completions \\\n  -H "Content-Type: application/json" \\\n  -H "Authorization: Bearer %s" \\\n  -d \'{"model":"gpt-4o-mini","messages":[{"role":"user","content":"ping"}]}\'\n'
        % t,
        t,
        "provider",
    )
    t = anthropic_key()
    add(
        "curl_anthropic_messages_x_api_key_header",
        'curl https://api.anthropic.com/v1/messages \\\n  --header "x-api-key: %s" \\\n  --header "anthropic-version: 2023-06-01" \\\n  --header "content-type: application/json" \\\n  --data \'{"model":"claude-3-5-haiku-latest","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}\'\n'
        % t,
        t,
        "provider",
    )
    t = ghp()
    add(
        "curl_github_api_repos_token_header",
        "curl -s -H \"Authorization: token %s\" https://api.github.com/repos/acme/infra/actions/runs?per_page=5 | jq '.workflow_runs[].status'\n"
        % t,
        t,
        "provider",
    )
    t = slack_bot()
    add(
        "curl_slack_chat_post_message_bearer",
        'curl -X POST https://slack.com/api/chat.postMessage -H "Authorization: Bearer %s" -H \'Content-type: application/json\' --data \'{"channel":"C04RELEASES","text":"v2.3.0 deployed"}\'\n'
        % t,
        t,
        "provider",
    )
    t = stripe_sk()
    add(
        "curl_stripe_charges_basic_user_colon",
        "curl https://api.stripe.com/v1/refunds \\\n  -u %s: \\\n  -d payment_intent=pi_3PfXq2Lk8aB1cD2e0abc1234 \n"
        % t,
        t,
        "provider",
    )
    t = sendgrid()
    add(
        "curl_sendgrid_mail_send_bearer",
        "curl --request POST --url https://api.sendgrid.com/v3/mail/send --header \"Authorization: Bearer %s\" --header 'Content-Type: application/json' --data @mail.json\n"
        % t,
        t,
        "provider",
    )
    t = glpat()
    add(
        "curl_gitlab_private_token_header_pipelines",
        'curl --header "PRIVATE-TOKEN: %s" "https://gitlab.example.com/api/v4/projects/42/pipelines?status=failed"\n'
        % t,
        t,
        "provider",
    )
    t = hf_tok()
    add(
        "curl_huggingface_whoami_v2",
        '$ curl -s https://huggingface.co/api/whoami-v2 -H \'Authorization: Bearer %s\'\n{"type":"user","name":"mlops-bot"}\n'
        % t,
        t,
        "provider",
    )
    t = telegram_bot()
    add(
        "curl_telegram_bot_send_message_url_path",
        'curl -s "https://api.telegram.org/bot%s/sendMessage" -d chat_id=-1001234567890 -d text="backup finished"\n'
        % t,
        t,
        "provider",
    )
    wid, wtok = str(R.randint(10**17, 10**18)), rs(B64URL, 68)
    add(
        "curl_discord_webhook_execute_url",
        'curl -H "Content-Type: application/json" -d \'{"content":"nightly build failed"}\' https://discord.com/api/webhooks/%s/%s\n'
        % (wid, wtok),
        wtok,
        "provider",
    )
    a, b, c = "T" + rs(UALNUM, 10), "B" + rs(UALNUM, 10), rs(ALNUM, 24)
    add(
        "curl_slack_incoming_webhook_services_url",
        "curl -X POST -H 'Content-type: application/json' --data '{\"text\":\"disk 91%% on db-2\"}' https://hooks.slack.com/services/%s/%s/%s\n"
        % (a, b, c),
        c,
        "provider",
    )
    t = hex_secret(32)
    add(
        "curl_datadog_series_dd_api_key_header",
        'curl -X POST "https://api.datadoghq.eu/api/v2/series" -H "DD-API-KEY: %s" -H "Content-Type: application/json" -d @metrics.json\n'
        % t,
        t,
        "context",
    )
    t = rs(B64URL, 40)
    add(
        "curl_cloudflare_purge_cache_bearer",
        'curl -X POST "https://api.cloudflare.com/client/v4/zones/023e105f4ecef8ad9ca31a8372d0c353/purge_cache" \\\n     -H "Authorization: Bearer %s" \\\n     --data \'{"purge_everything":true}\'\n'
        % t,
        t,
        "context",
    )
    sid, tok = "AC" + rs(HEX, 32), rs(HEX, 32)
    add(
        "curl_twilio_messages_account_sid_auth_token",
        'curl -X POST https://api.twilio.com/2010-04-01/Accounts/%s/Messages.json \\\n  --data-urlencode "To=+15005550006" --data-urlencode "From=+15005550001" --data-urlencode "Body=hello" \\\n  -u %s:%s\n'
        % (sid, sid, tok),
        tok,
        "context",
    )
    t = linear_key()
    add(
        "httpie_linear_graphql_authorization",
        "http POST https://api.linear.app/graphql Authorization:%s query='{ viewer { id name } }'\n"
        % t,
        t,
        "provider",
    )
    t = "ntn_" + rs(DIG, 11) + rs(ALNUM, 35)
    add(
        "wget_notion_search_header",
        "wget -qO- --header='Authorization: Bearer %s' --header='Notion-Version: 2022-06-28' --post-data='{}' https://api.notion.com/v1/search\n"
        % t,
        t,
        "provider",
    )
    t = do_pat()
    add(
        "python_requests_digitalocean_droplets",
        'import requests\nr = requests.get("https://api.digitalocean.com/v2/droplets",\n                 headers={"Authorization": "Bearer %s"})\nprint(r.json()["meta"])\n'
        % t,
        t,
        "provider",
    )
    t = groq_key()
    add(
        "js_fetch_groq_openai_compatible_endpoint",
        "const res = await fetch('https://api.groq.com/openai/v1/chat/completions', {\n  method: 'POST',\n  headers: { Authorization: 'Bearer %s', 'Content-Type': 'application/json' },\n  body: JSON.stringify(payload),\n});\n"
        % t,
        t,
        "provider",
    )
    t = rs(B64URL, 64)
    add(
        "powershell_invoke_restmethod_okta_ssws",
        "$headers = @{ Authorization = \"SSWS %s\"; Accept = 'application/json' }\nInvoke-RestMethod -Uri 'https://acme.okta.com/api/v1/users?limit=25' -Headers $headers\n"
        % t,
        t,
        "context",
    )
    t = jwt({"sub": "svc-reporting", "scope": "read:orders", "iat": 1718000000})
    add(
        "grpcurl_authorization_metadata_bearer_jwt",
        "grpcurl -H 'authorization: Bearer %s' -d '{\"id\": 42}' orders.internal:443 acme.orders.v1.OrderService/GetOrder\n"
        % t,
        t,
        "provider",
    )
    t = google_api_key()
    add(
        "curl_google_maps_geocode_key_query_param",
        'curl "https://maps.googleapis.com/maps/api/geocode/json?address=Unter+den+Linden+1,Berlin&key=%s"\n'
        % t,
        t,
        "provider",
    )
    t = newrelic_key()
    add(
        "curl_newrelic_nerdgraph_api_key_header",
        "curl https://api.eu.newrelic.com/graphql -H 'Content-Type: application/json' -H 'API-Key: %s' --data-binary '{\"query\":\"{ actor { user { name } } }\"}'\n"
        % t,
        t,
        "provider",
    )
    t = rs(LALNUM, 30)
    add(
        "curl_twitch_helix_oauth_bearer_with_client_id",
        "curl -H 'Authorization: Bearer %s' -H 'Client-Id: wbmytr93xzw8zbg0p1izqyzzc5mbiz' -X GET 'https://api.twitch.tv/helix/users?login=acme'\n"
        % t,
        t,
        "context",
    )


# ====================================================================
# D. everyday: code assignments in many languages
# ====================================================================
def section_code():
    items = [
        (
            "python_module_constant_settings",
            lambda v: 'API_BASE = "https://api.acme.io"\nAPI_KEY = "%s"\nTIMEOUT = 10\n' % v,
            "context",
            lambda: rs(ALNUM, 40),
        ),
        (
            "go_const_block_token",
            lambda v: 'const (\n\tbaseURL = "https://api.github.com"\n\tghToken = "%s"\n)\n' % v,
            "provider",
            ghp,
        ),
        (
            "java_static_final_password",
            lambda v: (
                'public class MailConfig {\n    private static final String SMTP_USER = "noreply@acme.io";\n    private static final String SMTP_PASSWORD = "%s";\n}\n'
                % v
            ),
            "context",
            pw,
        ),
        (
            "kotlin_companion_object_key",
            lambda v: 'companion object {\n    const val OPENAI_KEY = "%s"\n}\n' % v,
            "provider",
            openai_key,
        ),
        (
            "csharp_const_string_client_secret",
            lambda v: (
                'internal static class Auth\n{\n    public const string ClientId = "3f1c2a9e-77aa-4c1d-9b2a-0c5e2d1f8a44";\n    public const string ClientSecret = "%s";\n}\n'
                % v
            ),
            "provider",
            azure_ad_secret,
        ),
        (
            "ruby_initializer_constant",
            lambda v: '# config/initializers/stripe.rb\nStripe.api_key = "%s"\n' % v,
            "provider",
            stripe_rk,
        ),
        (
            "php_define_db_password",
            lambda v: (
                "<?php\ndefine('DB_HOST', 'localhost');\ndefine('DB_USER', 'wp_shop');\ndefine('DB_PASSWORD', '%s');\n"
                % v
            ),
            "context",
            pw,
        ),
        (
            "rust_const_str_api_token",
            lambda v: (
                'const API_TOKEN: &str = "%s";\n\nfn client() -> reqwest::Client { reqwest::Client::new() }\n'
                % v
            ),
            "provider",
            hf_tok,
        ),
        (
            "swift_let_api_key",
            lambda v: 'enum Secrets {\n    static let revenueCatKey = "%s"\n}\n' % v,
            "context",
            lambda: "sk_" + rs(ALNUM, 32),
        ),
        (
            "scala_val_password_in_object",
            lambda v: 'object DbConf {\n  val user = "spark"\n  val password = "%s"\n}\n' % v,
            "context",
            pw,
        ),
        (
            "elixir_config_exs_secret_key_base",
            lambda v: (
                'config :shop, ShopWeb.Endpoint,\n  url: [host: "shop.acme.io"],\n  secret_key_base: "%s"\n'
                % v
            ),
            "context",
            lambda: rs(B64, 64),
        ),
        (
            "dart_const_supabase_service_jwt",
            lambda v: (
                "const supabaseUrl = 'https://xyzcompany.supabase.co';\nconst supabaseServiceKey = '%s';\n"
                % v
            ),
            "provider",
            lambda: jwt(
                {
                    "iss": "supabase",
                    "ref": "xyzcompany",
                    "role": "service_role",
                    "iat": 1700000000,
                    "exp": 2015576000,
                }
            ),
        ),
        (
            "lua_nginx_openresty_shared_secret",
            lambda v: (
                'local hmac_secret = "%s"\nlocal sig = ngx.hmac_sha1(hmac_secret, ngx.var.request_uri)\n'
                % v
            ),
            "context",
            hex_secret,
        ),
        (
            "perl_my_password_dbi_connect",
            lambda v: (
                'my $dbh = DBI->connect("dbi:Pg:dbname=legacy;host=db01", "report", "%s", { RaiseError => 1 });\n'
                % v
            ),
            "context",
            pw_nosym,
        ),
        (
            "r_sys_setenv_key",
            lambda v: 'Sys.setenv(OPENAI_API_KEY = "%s")\nlibrary(ellmer)\n' % v,
            "provider",
            openai_key,
        ),
        (
            "julia_const_token_header",
            lambda v: (
                'const TOKEN = "%s"\nresp = HTTP.get(url, ["Authorization" => "Bearer $TOKEN"])\n'
                % v
            ),
            "provider",
            replicate_tok,
        ),
        (
            "haskell_api_key_binding",
            lambda v: 'apiKey :: ByteString\napiKey = "%s"\n' % v,
            "context",
            lambda: rs(ALNUM, 32),
        ),
        (
            "clojure_def_db_spec_password",
            lambda v: (
                '(def db-spec {:dbtype "postgresql" :dbname "wh" :user "wh" :password "%s"})\n' % v
            ),
            "context",
            pw_nosym,
        ),
        (
            "c_define_wifi_psk_firmware",
            lambda v: (
                '#define WIFI_SSID "acme-iot"\n#define WIFI_PSK  "%s"\n#define MQTT_HOST "10.0.0.5"\n'
                % v
            ),
            "context",
            pw,
        ),
        (
            "cpp_std_string_license_signing_key",
            lambda v: 'static const std::string kSigningKey = "%s";\n' % v,
            "context",
            lambda: b64_secret(48),
        ),
        (
            "groovy_gradle_ext_nexus_password",
            lambda v: "ext {\n    nexusUser = 'deployer'\n    nexusPassword = '%s'\n}\n" % v,
            "context",
            pw,
        ),
        (
            "bash_script_variable_token",
            lambda v: (
                '#!/usr/bin/env bash\nset -euo pipefail\nTOKEN="%s"\ncurl -fsS -H "Authorization: Bearer $TOKEN" "$API/v1/sync"\n'
                % v
            ),
            "provider",
            dockerhub_pat,
        ),
        (
            "typescript_object_literal_config",
            lambda v: (
                "export const config = {\n  region: 'eu-central-1',\n  pinecone: { apiKey: '%s', index: 'docs' },\n};\n"
                % v
            ),
            "provider",
            pinecone_key,
        ),
        (
            "fsharp_let_literal_password",
            lambda v: '[<Literal>]\nlet ConnPassword = "%s"\n' % v,
            "context",
            pw_nosym,
        ),
        (
            "zig_const_api_key_slice",
            lambda v: 'const api_key: []const u8 = "%s";\n' % v,
            "provider",
            sendgrid,
        ),
        (
            "objc_nsstring_secret",
            lambda v: 'static NSString * const kAPISecret = @"%s";\n' % v,
            "context",
            lambda: hex_secret(40),
        ),
        ("nim_const_bot_token", lambda v: 'const botToken = "%s"\n' % v, "provider", telegram_bot),
        (
            "ocaml_let_webhook_secret",
            lambda v: 'let webhook_secret = "%s"\n' % v,
            "provider",
            stripe_whsec,
        ),
        (
            "sql_create_user_identified_by",
            lambda v: (
                "CREATE USER 'metabase'@'%%' IDENTIFIED BY '%s';\nGRANT SELECT ON analytics.* TO 'metabase'@'%%';\n"
                % v
            ),
            "context",
            pw,
        ),
        (
            "postgres_alter_role_password",
            lambda v: "ALTER ROLE grafana_reader WITH LOGIN PASSWORD '%s';\n" % v,
            "context",
            pw,
        ),
        (
            "python_dataclass_default_password",
            lambda v: (
                '@dataclass\nclass FtpSettings:\n    host: str = "ftp.partner.example"\n    user: str = "acme"\n    password: str = "%s"\n'
                % v
            ),
            "context",
            pw,
        ),
        (
            "yaml_spring_application_yml_client_secret",
            lambda v: (
                "spring:\n  security:\n    oauth2:\n      client:\n        registration:\n          google:\n            client-id: 1234567890-abcdefg.apps.googleusercontent.com\n            client-secret: %s\n"
                % v
            ),
            "provider",
            gocspx,
        ),
    ]
    for kind, tmpl, shape, gen in items:
        v = gen()
        add("code_" + kind, tmpl(v), v, shape)


# ====================================================================
# E. everyday: chat / session notes in many languages
# ====================================================================
def section_chat():
    items = [
        (
            "english",
            "slack_dm_staging_db",
            lambda v: (
                "hey, staging db pw is %s -- ping me if it doesn't work, I rotated it yesterday" % v
            ),
            pw,
            "context",
        ),
        (
            "english",
            "agent_session_note_paste",
            lambda v: (
                "Session note: user pasted their GitHub token (%s) so I could push the release branch. Remind them to revoke it."
                % v
            ),
            ghp,
            "provider",
        ),
        (
            "german",
            "teams_nachricht_vpn_zugang",
            lambda v: (
                "Servus, der VPN-Zugang für den Praktikanten: Benutzer praktikant01, Kennwort %s. Bitte nach dem ersten Login ändern."
                % v
            ),
            pw,
            "context",
        ),
        (
            "french",
            "message_mot_de_passe_nas",
            lambda v: (
                "Salut ! Le mot de passe du NAS du bureau c'est %s, ne le partage pas sur le canal général stp."
                % v
            ),
            pw,
            "context",
        ),
        (
            "spanish",
            "nota_sesion_token_npm",
            lambda v: (
                "Nota: para publicar el paquete usé el token de npm %s que me pasó Laura por WhatsApp."
                % v
            ),
            npm_tok,
            "provider",
        ),
        (
            "portuguese_br",
            "mensagem_senha_banco_homolog",
            lambda v: (
                "Galera, a senha do banco de homologação mudou: %s (usuário continua sendo app_hml)."
                % v
            ),
            pw,
            "context",
        ),
        (
            "italian",
            "messaggio_password_jenkins",
            lambda v: "Ciao, la password di admin su Jenkins è %s, l'ho messa anche nel vault." % v,
            pw,
            "context",
        ),
        (
            "dutch",
            "bericht_wachtwoord_ftp_klant",
            lambda v: (
                "Het wachtwoord voor de FTP van de klant is %s. Gebruikersnaam: acme_upload." % v
            ),
            pw,
            "context",
        ),
        (
            "polish",
            "wiadomosc_haslo_serwer_testowy",
            lambda v: "Hasło do serwera testowego to %s, login root. Zmień je po wdrożeniu." % v,
            pw,
            "context",
        ),
        (
            "russian",
            "soobshchenie_parol_ot_bazy",
            lambda v: "Пароль от базы на проде: %s — никому не пересылай, пожалуйста." % v,
            pw,
            "context",
        ),
        (
            "ukrainian",
            "povidomlennia_token_bota",
            lambda v: "Ось токен нашого Telegram-бота: %s, додай його в налаштування сервера." % v,
            telegram_bot,
            "provider",
        ),
        (
            "turkish",
            "mesaj_sifre_yonetim_paneli",
            lambda v: (
                "Yönetim paneli şifresi: %s — kullanıcı adı admin. Lütfen kimseyle paylaşma." % v
            ),
            pw,
            "context",
        ),
        (
            "japanese",
            "chat_stg_admin_pasuwado",
            lambda v: "検証環境の管理画面パスワードは %s です。ユーザー名は admin です。" % v,
            pw,
            "context",
        ),
        (
            "chinese_simplified",
            "note_openai_miyao_tiexie",
            lambda v: "我把 OpenAI 的密钥贴在这里了：%s ，用完记得在后台删掉。" % v,
            openai_key,
            "provider",
        ),
        (
            "chinese_traditional",
            "chat_router_mima",
            lambda v: "辦公室路由器的管理密碼是 %s，帳號 admin。" % v,
            pw,
            "context",
        ),
        (
            "korean",
            "chat_db_bimilbeonho",
            lambda v: "운영 DB 비밀번호는 %s 입니다. 외부에 공유하지 마세요." % v,
            pw,
            "context",
        ),
        (
            "vietnamese",
            "tin_nhan_mat_khau_may_chu",
            lambda v: "Mật khẩu máy chủ staging là %s, tài khoản deploy." % v,
            pw,
            "context",
        ),
        (
            "indonesian",
            "pesan_kata_sandi_cpanel",
            lambda v: "Kata sandi cPanel klien: %s. Username-nya acmeid." % v,
            pw,
            "context",
        ),
        (
            "hindi",
            "sandesh_password_server",
            lambda v: "सर्वर का पासवर्ड %s है, यूज़र ubuntu है। किसी को मत भेजना।" % v,
            pw,
            "context",
        ),
        (
            "arabic",
            "risala_kalimat_sir_lawhat",
            lambda v: "كلمة السر للوحة التحكم هي %s واسم المستخدم admin" % v,
            pw,
            "context",
        ),
        (
            "hebrew",
            "hodaa_sisma_le_shrat",
            lambda v: "הסיסמה לשרת הבדיקות היא %s, שם משתמש deploy." % v,
            pw,
            "context",
        ),
        (
            "swedish",
            "meddelande_losenord_wifi_kontor",
            lambda v: "Lösenordet till kontorets wifi (Acme-Guest) är %s" % v,
            pw,
            "context",
        ),
        (
            "norwegian",
            "melding_passord_backup",
            lambda v: "Passordet til backup-serveren er %s, brukernavn restic." % v,
            pw,
            "context",
        ),
        (
            "danish",
            "besked_adgangskode_mailserver",
            lambda v: "Adgangskoden til mailserveren er %s (bruger: support@acme.dk)." % v,
            pw,
            "context",
        ),
        (
            "finnish",
            "viesti_salasana_tietokanta",
            lambda v: "Tietokannan salasana on %s, käyttäjä app." % v,
            pw,
            "context",
        ),
        (
            "czech",
            "zprava_heslo_k_databazi",
            lambda v: "Heslo k databázi na stagingu je %s, uživatel app." % v,
            pw,
            "context",
        ),
        (
            "greek",
            "minima_kodikos_diaxeirisi",
            lambda v: "Ο κωδικός για το panel διαχείρισης είναι %s" % v,
            pw,
            "context",
        ),
        (
            "thai",
            "khokhwam_rahat_phan_server",
            lambda v: "รหัสผ่านเซิร์ฟเวอร์ทดสอบคือ %s ผู้ใช้ deploy" % v,
            pw,
            "context",
        ),
        (
            "persian",
            "payam_ramz_obur_server",
            lambda v: "رمز عبور سرور تست %s است، نام کاربری deploy" % v,
            pw,
            "context",
        ),
        (
            "romanian",
            "mesaj_parola_gitlab_token",
            lambda v: (
                "Am generat un token GitLab pentru pipeline: %s — expiră peste 30 de zile." % v
            ),
            glpat,
            "provider",
        ),
        (
            "hungarian",
            "uzenet_jelszo_adatbazis",
            lambda v: "Az adatbázis jelszava: %s (felhasználó: app_rw)" % v,
            pw,
            "context",
        ),
        (
            "malay",
            "mesej_kata_laluan_pelayan",
            lambda v: "Kata laluan pelayan pengeluaran ialah %s, jangan kongsi." % v,
            pw,
            "context",
        ),
        (
            "swahili",
            "ujumbe_nenosiri_seva",
            lambda v: "Nenosiri la seva ya majaribio ni %s, mtumiaji ni deploy." % v,
            pw,
            "context",
        ),
        (
            "catalan",
            "missatge_contrasenya_wordpress",
            lambda v: "La contrasenya del WordPress del client és %s, usuari editor." % v,
            pw,
            "context",
        ),
        (
            "bengali",
            "barta_password_database",
            lambda v: "ডাটাবেসের পাসওয়ার্ড হল %s, ইউজার app" % v,
            pw,
            "context",
        ),
        (
            "croatian",
            "poruka_lozinka_posluzitelj",
            lambda v: "Lozinka za poslužitelj je %s, korisnik deploy." % v,
            pw,
            "context",
        ),
        (
            "bulgarian",
            "saobshtenie_parola_vpn",
            lambda v: "Паролата за VPN е %s, потребител ivan.p" % v,
            pw,
            "context",
        ),
        (
            "estonian",
            "sonum_parool_andmebaas",
            lambda v: "Andmebaasi parool on %s, kasutaja app." % v,
            pw,
            "context",
        ),
        (
            "slovak",
            "sprava_heslo_sentry_token",
            lambda v: "Tu je auth token do Sentry pre release pipeline: %s" % v,
            sentry_user,
            "provider",
        ),
        (
            "english",
            "handover_doc_anthropic_key",
            lambda v: (
                "Handover: the eval harness reads the key from ~/.config/evals/key; current value %s (billing is on the research team's account)."
                % v
            ),
            anthropic_key,
            "provider",
        ),
        (
            "german",
            "commit_body_aws_zugangsschluessel",
            lambda v: (
                "fix(deploy): Bucket-Region korrigiert\n\nZugangsschlüssel für den Upload-User (vorübergehend): %s"
                % v
            ),
            aws_secret,
            "context",
        ),
        (
            "japanese",
            "agent_session_memo_hf_token",
            lambda v: (
                "作業メモ: モデルのダウンロードに Hugging Face のトークン %s を使用。終わったら失効させること。"
                % v
            ),
            hf_tok,
            "provider",
        ),
    ]
    for lang, topic, tmpl, gen, shape in items:
        v = gen()
        add("note12_%s_%s" % (lang, topic), tmpl(v), v, shape)


# ====================================================================
# F. everyday: logs and stack traces
# ====================================================================
def section_logs():
    p = pw_nosym()
    add(
        "trace_python_sqlalchemy_operationalerror_url",
        'Traceback (most recent call last):\n  File "/app/worker.py", line 41, in <module>\n    engine.connect()\nsqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection to server at "10.0.3.4", port 5432 failed: timeout expired\n(Background on this error at: https://sqlalche.me/e/20/e3q8)\n  engine url: postgresql://jobs:%s@10.0.3.4:5432/jobs\n'
        % p,
        p,
        "context",
    )
    p = pw_nosym()
    add(
        "trace_java_hikari_pool_init_jdbc_url",
        '2024-06-11 09:14:02.118 ERROR 1 --- [main] com.zaxxer.hikari.pool.HikariPool : HikariPool-1 - Exception during pool initialization.\norg.postgresql.util.PSQLException: FATAL: password authentication failed for user "svc"\n\tat org.postgresql.core.v3.ConnectionFactoryImpl.doAuthentication(ConnectionFactoryImpl.java:693)\nCaused by: jdbcUrl=jdbc:postgresql://pg:5432/app?user=svc&password=%s\n'
        % p,
        p,
        "context",
    )
    t = slack_bot()
    add(
        "log_node_axios_error_config_headers_dump",
        "AxiosError: Request failed with status code 429\n    at settle (/app/node_modules/axios/lib/core/settle.js:19:12)\n  config: {\n    url: 'https://slack.com/api/conversations.history',\n    method: 'get',\n    headers: { Accept: 'application/json', Authorization: 'Bearer %s' }\n  }\n"
        % t,
        t,
        "provider",
    )
    t = rs(ALNUM, 32)
    add(
        "log_nginx_access_api_key_query_string",
        '203.0.113.17 - - [11/Jun/2024:10:22:31 +0000] "GET /v1/export?format=csv&api_key=%s HTTP/1.1" 200 48213 "-" "python-requests/2.32.3"\n'
        % t,
        t,
        "context",
    )
    t = stripe_sk()
    add(
        "log_ruby_stripe_debug_request_line",
        "I, [2024-06-11T10:01:44.512 #1]  INFO -- : Request to Stripe API api_key=%s method=post path=/v1/payment_intents\n"
        % t,
        t,
        "provider",
    )
    p = pw()
    add(
        "log_go_panic_struct_print_password_field",
        "panic: dial tcp 10.1.0.9:5672: connect: connection refused\n\ngoroutine 1 [running]:\nmain.mustConnect({Host:rabbit.internal Port:5672 User:orders Password:%s VHost:/})\n\t/src/cmd/orders/main.go:58 +0x1a5\n"
        % p,
        p,
        "context",
    )
    t = openai_key()
    add(
        "log_python_httpx_debug_request_headers",
        "DEBUG:httpcore.http11:send_request_headers.started request=<Request [b'POST']>\nDEBUG:openai._base_client:Request options: {'method': 'post', 'url': '/chat/completions', 'headers': {'Authorization': 'Bearer %s'}}\n"
        % t,
        t,
        "provider",
    )
    p = pw_nosym()
    add(
        "log_docker_compose_up_printed_command",
        "db-1   | 2024-06-11 10:03:12.001 UTC [1] LOG:  database system is ready to accept connections\napi-1  | Starting with args: --db-host=db --db-user=api --db-password=%s --workers=4\n"
        % p,
        p,
        "context",
    )
    t = ghp()
    add(
        "log_git_push_remote_url_with_token_error",
        "$ git push origin release/2.4\nfatal: unable to access 'https://x-access-token:%s@github.com/acme/app.git/': The requested URL returned error: 403\n"
        % t,
        t,
        "provider",
    )
    p = pw_nosym()
    add(
        "log_php_pdoexception_constructor_args",
        "PHP Fatal error:  Uncaught PDOException: SQLSTATE[HY000] [1045] Access denied for user 'shop'@'10.0.0.8' in /var/www/html/db.php:12\nStack trace:\n#0 /var/www/html/db.php(12): PDO->__construct('mysql:host=10.0...', 'shop', '%s')\n#1 {main}\n"
        % p,
        p,
        "context",
    )
    t = rs(HEX, 40)
    add(
        "log_systemd_journal_curl_failed_header",
        "Jun 11 10:15:02 build-3 backup.sh[8841]: + curl -fsS -H 'X-Auth-Token: %s' https://objects.example-cloud.net/v1/AUTH_acme/backups -T db.tar.zst\nJun 11 10:15:03 build-3 backup.sh[8841]: curl: (22) The requested URL returned error: 401\n"
        % t,
        t,
        "context",
    )
    p = pw_nosym()
    add(
        "log_ansible_verbose_task_args_password",
        'TASK [mysql_user : create app user] ***\nfatal: [db1]: FAILED! => {"changed": false, "invocation": {"module_args": {"name": "app", "password": "%s", "priv": "app.*:ALL", "host": "%%"}}, "msg": "unable to connect to database"}\n'
        % p,
        p,
        "context",
    )
    t = vault_tok()
    add(
        "log_terraform_debug_vault_provider_header",
        "2024-06-11T10:20:33.901Z [DEBUG] provider.terraform-provider-vault_v4.2.0: Vault request: GET /v1/sys/mounts\n2024-06-11T10:20:33.901Z [DEBUG] provider.terraform-provider-vault_v4.2.0: X-Vault-Token: %s\n"
        % t,
        t,
        "provider",
    )
    p = pw_nosym()
    add(
        "log_k8s_pod_crashloop_args_password",
        "$ kubectl logs migrate-7d9f-x2x9 --previous\nflyway: running with -url=jdbc:mysql://mysql:3306/app -user=flyway -password=%s\nERROR: Unable to obtain connection from database\n"
        % p,
        p,
        "context",
    )
    t = sendgrid()
    add(
        "log_celery_task_failure_kwargs_repr",
        "[2024-06-11 10:31:12,004: ERROR/ForkPoolWorker-2] Task notify.send_mail[4b1c...] raised unexpected: HTTPError('401')\nkwargs={'to': 'ops@acme.io', 'template': 'weekly', 'sg_key': '%s'}\n"
        % t,
        t,
        "provider",
    )
    p = pw()
    add(
        "log_redis_cli_auth_in_shell_history",
        ": 1718100000:0;redis-cli -h cache-prod.internal -p 6379 -a '%s' --no-auth-warning info memory\n: 1718100041:0;exit\n"
        % p,
        p,
        "context",
    )
    t = dockerhub_pat()
    add(
        "log_github_actions_run_echo_not_masked",
        '2024-06-11T10:40:12.3310000Z ##[group]Run echo "login with $DOCKER_TOKEN"\n2024-06-11T10:40:12.3410000Z login with %s\n2024-06-11T10:40:12.3420000Z ##[endgroup]\n'
        % t,
        t,
        "provider",
    )
    t = rs(ALNUM, 40)
    add(
        "log_sentry_breadcrumb_query_token_param",
        '{"category":"http","data":{"method":"GET","url":"https://partner.example.com/feed?access_token=%s","status_code":500},"level":"error"}\n'
        % t,
        t,
        "context",
    )
    p = pw_nosym()
    add(
        "log_dotnet_exception_connection_string",
        "Unhandled exception. System.ArgumentException: Keyword not supported: 'trustservercertificat'.\n   at Microsoft.Data.SqlClient.SqlConnectionStringBuilder..ctor(String connectionString)\n   ConnectionString: Server=sql01;Database=erp;User Id=erp_app;Password=%s;TrustServerCertificat=true\n"
        % p,
        p,
        "context",
    )
    t = npm_tok()
    add(
        "log_npm_publish_verbose_npmrc_dump",
        "npm verb config --userconfig /home/runner/.npmrc\nnpm verb config //registry.npmjs.org/:_authToken=%s\nnpm ERR! code E403\n"
        % t,
        t,
        "provider",
    )
    t = anthropic_key()
    add(
        "trace_python_anthropic_authentication_error_locals",
        "Traceback (most recent call last):\n  File \"/home/dev/evals/run.py\", line 88, in main\n    client = Anthropic(api_key=api_key)\n    # locals: api_key = '%s', model = 'claude-3-5-sonnet-latest'\nanthropic.AuthenticationError: Error code: 401 - invalid x-api-key\n"
        % t,
        t,
        "provider",
    )


# ====================================================================
# G. long tail
# ====================================================================
BIP39 = (
    "abandon ability able about above absent absorb abstract absurd abuse access accident "
    "account accuse achieve acid acoustic acquire across act action actor actress actual adapt "
    "add addict address adjust admit adult advance advice aerobic affair afford afraid again age "
    "agent agree ahead aim air airport aisle alarm album alcohol alert alien all alley allow "
    "almost alone alpha already also alter always amateur amazing among amount amused analyst "
    "anchor ancient anger angle angry animal ankle announce annual another answer antenna "
    "antique anxiety any apart apology appear apple approve april arch arctic area arena argue "
    "arm armed armor army around arrange arrest arrive arrow art artefact artist artwork ask "
    "aspect assault asset assist assume asthma athlete atom attack attend attitude attract "
    "auction audit august aunt author auto autumn average avocado avoid awake aware away "
    "awesome awful awkward axis baby bachelor bacon badge bag balance balcony ball bamboo "
    "banana banner bar barely bargain barrel base basic basket battle beach bean beauty because "
    "become beef before begin behave behind believe below belt bench benefit best betray better "
    "between beyond bicycle bid bike bind biology bird birth bitter black blade blame blanket "
    "blast bleak bless blind blood blossom blouse blue blur blush board boat body boil bomb bone "
    "bonus book boost border boring borrow boss bottom bounce box boy bracket brain brand brass "
    "brave bread breeze brick bridge brief bright bring brisk broccoli broken bronze broom "
    "brother brown brush bubble buddy budget buffalo build bulb bulk bullet bundle bunker "
    "burden burger burst bus business busy butter buyer buzz cabbage cabin cable cactus cage "
    "cake call calm camera camp can canal cancel candy cannon canoe canvas canyon capable "
    "capital captain car carbon card cargo carpet carry cart case cash casino castle casual"
).split()


def section_tail():
    # ---- recovery material
    words = " ".join(R.choice(BIP39) for _ in range(12))
    add(
        "recovery_bip39_twelve_words_in_session_note",
        "Agent note: user asked me to restore the test wallet; seed phrase they gave: %s (testnet only, they say)."
        % words,
        words,
        "context",
    )
    words = " ".join(R.choice(BIP39) for _ in range(24))
    add(
        "recovery_bip39_24_words_numbered_list",
        "Recovery phrase for the treasury ledger (DO NOT LOSE):\n"
        + "\n".join("%2d. %s" % (i + 1, w) for i, w in enumerate(words.split()))
        + "\n",
        "\n".join("%2d. %s" % (i + 1, w) for i, w in enumerate(words.split())),
        "context",
        parts=["%2d. %s" % (i + 1, w) for i, w in enumerate(words.split())],
    )
    codes = ["%s-%s" % (rs(HEX, 5), rs(HEX, 5)) for _ in range(8)]
    add(
        "recovery_github_2fa_codes_txt",
        "github-recovery-codes.txt\n\n" + "\n".join(codes) + "\n\nPut these somewhere safe.\n",
        codes[0],
        "context",
        parts=codes,
    )
    s = rs(B32, 32)
    add(
        "recovery_totp_otpauth_uri_secret_param",
        "otpauth://totp/Acme%%20AWS:ops@acme.io?secret=%s&issuer=Acme%%20AWS&algorithm=SHA1&digits=6&period=30"
        % s,
        s,
        "context",
    )
    s = " ".join(rs(B32, 4) for _ in range(8)).lower()
    add(
        "recovery_totp_setup_key_spaced_groups_chat",
        "If the QR code doesn't scan, enter this setup key manually in your authenticator: %s" % s,
        s,
        "context",
    )
    k = age_key()
    add(
        "recovery_age_identity_file_keys_txt",
        "# created: 2024-05-02T11:20:33+02:00\n# public key: age1%s\n%s\n" % (rs(BECH, 58), k),
        k,
        "provider",
    )
    k = btc_wif()
    add(
        "recovery_bitcoin_wif_in_importprivkey",
        '$ bitcoin-cli -testnet importprivkey %s "cold-test" false\n' % k,
        k,
        "provider",
    )
    bl = "-".join(rs(DIG, 6) for _ in range(8))
    add(
        "recovery_bitlocker_key_in_it_ticket",
        "Ticket #48211 - Laptop LT-0932 locked after BIOS update.\nBitLocker recovery key: %s\nKey ID: 4F2A91C3\n"
        % bl,
        bl,
        "context",
    )
    ap = "-".join(rs(LO, 4) for _ in range(4))
    add(
        "recovery_apple_app_specific_password_mail",
        "For the CI notarization step use Apple ID dev@acme.io with app-specific password %s" % ap,
        ap,
        "context",
    )
    gp = " ".join(rs(LO, 4) for _ in range(4))
    add(
        "recovery_google_app_password_smtp_note",
        "Gmail SMTP relay: smtp.gmail.com:587, user alerts@acme.io, app password: %s" % gp,
        gp,
        "context",
    )
    body = pem_body(8)
    block = (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n%s\n-----END OPENSSH PRIVATE KEY-----"
        % body
    )
    add(
        "recovery_openssh_private_key_cat_output",
        "$ cat ~/.ssh/deploy_ed25519\n%s\n" % block,
        block,
        "provider",
    )
    body = pem_body(10)
    block = (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQVYBGY%s\n=%s\n-----END PGP PRIVATE KEY BLOCK-----"
        % (body, rs(B64, 4))
    )
    add(
        "recovery_gpg_export_secret_keys_armor",
        "$ gpg --export-secret-keys --armor releases@acme.io\n%s\n" % block,
        block,
        "provider",
    )
    lines = [rs(B64, 64) for _ in range(6)]
    ppk = (
        "PuTTY-User-Key-File-3: ssh-rsa\nEncryption: none\nComment: legacy-jump\nPublic-Lines: 2\n%s\n%s\nPrivate-Lines: 6\n%s\nPrivate-MAC: %s\n"
        % (rs(B64, 64), rs(B64, 20), "\n".join(lines), rs(HEX, 64))
    )
    add("recovery_putty_ppk_v3_private_lines", ppk, lines[0], "provider", parts=lines)
    k = b64(bytes(R.getrandbits(8) for _ in range(32)))
    add(
        "recovery_wireguard_wg0_conf_privatekey",
        "[Interface]\nAddress = 10.8.0.2/32\nPrivateKey = %s\nDNS = 1.1.1.1\n\n[Peer]\nPublicKey = %s\nEndpoint = vpn.acme.io:51820\nAllowedIPs = 0.0.0.0/0\n"
        % (k, b64(bytes(R.getrandbits(8) for _ in range(32)))),
        k,
        "context",
    )
    k = "0x" + hex_secret(64)
    add(
        "recovery_ethereum_foundry_cast_private_key_flag",
        "forge script script/Deploy.s.sol --rpc-url $SEPOLIA_RPC --private-key %s --broadcast\n"
        % k,
        k,
        "context",
    )
    p = pw()
    add(
        "recovery_keepass_master_password_todo",
        "TODO (handover): KeePass DB is in the shared drive /it/vault.kdbx, master password %s" % p,
        p,
        "context",
    )
    p = pw_nosym()
    add(
        "recovery_luks_cryptsetup_echo_pipe",
        "echo -n '%s' | sudo cryptsetup luksOpen /dev/sdb1 backup --key-file=-\n" % p,
        p,
        "context",
    )

    # ---- encodings and split values
    user, p = "deploy", pw_nosym()
    enc = b64(("%s:%s" % (user, p)).encode())
    add(
        "enc_basic_auth_header_in_har_entry",
        '{"name": "Authorization", "value": "Basic %s"}' % enc,
        enc,
        "context",
    )
    p = pw_nosym()
    enc = b64(p.encode())
    add(
        "enc_k8s_secret_data_base64_value",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: pg-credentials\ntype: Opaque\ndata:\n  username: %s\n  password: %s\n"
        % (b64(b"orders"), enc),
        enc,
        "context",
    )
    p = pw_nosym()
    enc = b64(("ci-bot:%s" % p).encode())
    add(
        "enc_docker_config_json_auths_auth",
        '{\n  "auths": {\n    "registry.acme.io": {\n      "auth": "%s"\n    }\n  }\n}\n' % enc,
        enc,
        "context",
    )
    t = ghp()
    enc = b64(t.encode())
    add(
        "enc_base64_wrapped_github_token_in_values",
        "# values.secret.yaml (base64, as the chart expects)\ngithub:\n  tokenB64: %s\n" % enc,
        enc,
        "context",
    )
    t = ghp()
    a, b = t[:18], t[18:]
    add(
        "split_python_implicit_string_concat_token",
        'TOKEN = ("%s"\n         "%s")  # split so the scanner stops complaining\n' % (a, b),
        t[:18],
        "provider",
        parts=[a, b],
    )
    t = openai_key()
    a, b, c = t[:60], t[60:120], t[120:]
    add(
        "split_js_array_join_key",
        "const key = ['%s', '%s', '%s'].join('');\n" % (a, b, c),
        a,
        "provider",
        parts=[a, b, c],
    )
    t = stripe_sk()
    hx = t.encode().hex()
    add(
        "enc_hex_encoded_stripe_key_bytes_fromhex",
        'STRIPE = bytes.fromhex("%s").decode()\n' % hx,
        hx,
        "context",
    )
    p = rs(ALNUM, 8) + "&" + rs(ALNUM, 6) + "=" + rs(ALNUM, 4) + "+"
    enc = urllib.parse.quote(p, safe="")
    add(
        "enc_urlencoded_password_in_form_post_body",
        "POST /oauth/token HTTP/1.1\nHost: auth.acme.io\nContent-Type: application/x-www-form-urlencoded\n\ngrant_type=password&username=svc-report&password=%s&client_id=reporting\n"
        % enc,
        enc,
        "context",
    )
    t = sendgrid()
    a, b = t[:40], t[40:]
    add(
        "split_quoted_printable_soft_line_break_email",
        "Content-Transfer-Encoding: quoted-printable\n\nHi team, the new SendGrid key for the newsletter service is %s=\n%s - please update the secret store.\n"
        % (a, b),
        a,
        "provider",
        parts=[a, b],
    )
    t = anthropic_key()
    a, b = t[:55], t[55:]
    add(
        "split_shell_line_continuation_export",
        'export ANTHROPIC_API_KEY="%s\\\n%s"\n' % (a, b),
        a,
        "provider",
        parts=[a, b],
    )
    p = pw_nosym()
    esc = "".join("\\u%04x" % ord(ch) for ch in p[:6]) + p[6:]
    add(
        "enc_json_unicode_escaped_password_prefix",
        '{"smtp": {"host": "mail.acme.io", "password": "%s"}}' % esc,
        esc,
        "context",
    )
    t = glpat()
    rev = t[::-1]
    add(
        "enc_reversed_token_string_reverse_call",
        '# obfuscated on purpose\nGL_TOKEN = "%s"[::-1]\n' % rev,
        rev,
        "context",
    )
    t = rs(ALNUM, 32)
    enc = b64(('{"api_key":"%s","region":"eu"}' % t).encode())
    add(
        "enc_base64_json_blob_ci_variable",
        "CI variable CONFIG_B64 (masked: no):\n%s\n" % enc,
        enc,
        "context",
    )
    p = pw_nosym()
    add(
        "enc_yaml_folded_block_private_token",
        "auth:\n  token: >-\n    %s\n    %s\n" % (p[:11], p[11:]),
        p[:11],
        "context",
        parts=[p[:11], p[11:]],
    )
    t = ghp()
    add(
        "split_go_byte_slice_join",
        'var tok = strings.Join([]string{"%s", "%s", "%s"}, "")\n' % (t[:12], t[12:26], t[26:]),
        t[12:26],
        "provider",
        parts=[t[:12], t[12:26], t[26:]],
    )

    # ---- rarer vendors and formats (provider)
    rare = [
        (
            "vendor_atlassian_api_token_jira_acli_login",
            lambda v: (
                "acli jira auth login --site acme.atlassian.net --email dev@acme.io --token %s\n"
                % v
            ),
            atlassian_tok,
        ),
        (
            "vendor_pypi_token_twine_upload_password_flag",
            lambda v: "twine upload -u __token__ -p %s dist/*\n" % v,
            pypi_tok,
        ),
        (
            "vendor_rubygems_api_key_credentials_yaml",
            lambda v: "---\n:rubygems_api_key: %s\n" % v,
            lambda: "rubygems_" + rs(HEX, 48),
        ),
        (
            "vendor_nuget_api_key_dotnet_push",
            lambda v: (
                "dotnet nuget push bin/Release/Acme.Core.3.1.0.nupkg --api-key %s --source https://api.nuget.org/v3/index.json\n"
                % v
            ),
            lambda: "oy2" + rs(LALNUM, 43),
        ),
        (
            "vendor_clojars_deploy_token_lein_profile",
            lambda v: (
                '{:auth {:repository-auth {#"clojars" {:username "acme" :password "%s"}}}}\n' % v
            ),
            lambda: "CLOJARS_" + rs(HEX, 60),
        ),
        (
            "vendor_crates_io_token_cargo_login",
            lambda v: "$ cargo login %s\n       Login token for `crates-io` saved\n" % v,
            lambda: "cio" + rs(ALNUM, 32),
        ),
        (
            "vendor_airtable_pat_pyairtable_api",
            lambda v: (
                "from pyairtable import Api\napi = Api('%s')\ntable = api.table('appX1y2Z3a4B5c6D7', 'Leads')\n"
                % v
            ),
            lambda: "pat" + rs(ALNUM, 14) + "." + rs(HEX, 64),
        ),
        (
            "vendor_sonarqube_squ_token_maven_flag",
            lambda v: (
                "mvn verify sonar:sonar -Dsonar.host.url=https://sonar.acme.io -Dsonar.token=%s\n"
                % v
            ),
            lambda: "squ_" + rs(HEX, 40),
        ),
        (
            "vendor_jfrog_reference_token_jf_config_add",
            lambda v: (
                "jf config add acme --url=https://acme.jfrog.io --access-token=%s --interactive=false\n"
                % v
            ),
            lambda: "cmVmdGtuOjAxOj" + rs(B62, 50),
        ),
        (
            "vendor_harness_pat_x_api_key",
            lambda v: (
                "curl -H 'x-api-key: %s' 'https://app.harness.io/ng/api/projects?accountIdentifier=px7xd_BFRCi-pfWPYXVjvw'\n"
                % v
            ),
            lambda: "pat.%s.%s.%s" % (rs(B64URL, 22), rs(HEX, 24), rs(ALNUM, 20)),
        ),
        (
            "vendor_octopus_api_key_octo_push",
            lambda v: (
                "octo push --package Acme.Web.1.2.3.zip --server https://deploy.acme.io --apiKey %s\n"
                % v
            ),
            lambda: "API-" + rs(UALNUM, 26),
        ),
        (
            "vendor_infracost_api_key_configure_set",
            lambda v: "infracost configure set api_key %s\n" % v,
            lambda: "ico-" + rs(ALNUM, 32),
        ),
        (
            "vendor_buildkite_user_token_bk_configure",
            lambda v: (
                "$ bk configure --org acme --token %s\nConfigured Buildkite CLI for org acme\n" % v
            ),
            lambda: "bkua_" + rs(HEX, 40),
        ),
        (
            "vendor_sourcegraph_sgp_src_access_token_env",
            lambda v: (
                "SRC_ENDPOINT=https://sourcegraph.acme.io SRC_ACCESS_TOKEN=%s src search 'repo:^acme/ lang:go context.TODO'\n"
                % v
            ),
            lambda: "sgp_" + rs(HEX, 16) + "_" + rs(HEX, 40),
        ),
        (
            "vendor_prefect_pnu_key_cloud_login",
            lambda v: "prefect cloud login --key %s --workspace acme/prod\n" % v,
            lambda: "pnu_" + rs(ALNUM, 36),
        ),
        (
            "vendor_scaleway_scw_access_key_profile",
            lambda v: "profiles:\n  prod:\n    access_key: %s\n    default_region: fr-par\n" % v,
            lambda: "SCW" + rs(UALNUM, 17),
        ),
        (
            "vendor_shippo_live_token_shipping_label",
            lambda v: (
                "curl https://api.goshippo.com/shipments/ -H 'Authorization: ShippoToken %s' -d address_from=... \n"
                % v
            ),
            lambda: "shippo_live_" + rs(HEX, 40),
        ),
        (
            "vendor_flutterwave_secret_key_nodejs",
            lambda v: "const flw = new Flutterwave(process.env.FLW_PUBLIC_KEY, '%s');\n" % v,
            lambda: "FLWSECK-" + rs(HEX, 32) + "-X",
        ),
        (
            "vendor_easypost_production_key_python",
            lambda v: 'client = easypost.EasyPostClient("%s")\n' % v,
            lambda: "EZAK" + rs(HEX, 54),
        ),
        (
            "vendor_typeform_personal_token_header",
            lambda v: "curl -H 'Authorization: Bearer %s' https://api.typeform.com/forms\n" % v,
            lambda: "tfp_" + rs(ALNUM, 44) + "_" + rs(ALNUM, 14),
        ),
        (
            "vendor_ngrok_authtoken_config_yml",
            lambda v: 'version: "3"\nagent:\n  authtoken: %s\n' % v,
            lambda: "2" + rs(ALNUM, 26) + "_" + rs(ALNUM, 21),
        ),
        (
            "vendor_bitbucket_app_password_atbb_git_remote",
            lambda v: (
                "git remote set-url origin https://acme-ci:%s@bitbucket.org/acme/legacy-api.git\n"
                % v
            ),
            lambda: "ATBB" + rs(ALNUM, 32) + rs(UHEX, 8),
        ),
        (
            "vendor_yandex_cloud_api_key_yc_config",
            lambda v: "$ yc config set token %s\n" % v,
            lambda: "y0_" + rs(B64URL, 54),
        ),
        (
            "vendor_tencent_cloud_secretid_tccli",
            lambda v: (
                "tccli configure set secretId %s secretKey %s region ap-guangzhou\n"
                % (v, rs(ALNUM, 32))
            ),
            lambda: "AKID" + rs(ALNUM, 32),
        ),
        (
            "vendor_alibaba_accesskey_id_aliyun_cli",
            lambda v: (
                "aliyun configure set --profile prod --mode AK --access-key-id %s --access-key-secret %s --region cn-hangzhou\n"
                % (v, rs(ALNUM, 30))
            ),
            lambda: "LTAI" + rs(ALNUM, 20),
        ),
        (
            "vendor_launchdarkly_sdk_key_server_init",
            lambda v: 'ldclient.set_config(Config("%s"))\n' % v,
            lambda: "sdk-" + uuid4(),
        ),
        (
            "vendor_posthog_personal_api_key_phx",
            lambda v: (
                "curl -H 'Authorization: Bearer %s' https://eu.posthog.com/api/projects/\n" % v
            ),
            lambda: "phx_" + rs(ALNUM, 43),
        ),
        (
            "vendor_mapbox_secret_sk_token_downloads",
            lambda v: (
                "# ~/.netrc for Mapbox iOS SDK download\nmachine api.mapbox.com\n  login mapbox\n  password %s\n"
                % v
            ),
            lambda: "sk.eyJ1IjoiYWNtZS1tYXBzIiwiYSI6I" + rs(B64URL, 20) + "." + rs(B64URL, 22),
        ),
        (
            "vendor_square_production_access_token_sdk",
            lambda v: "client = Client(access_token='%s', environment='production')\n" % v,
            lambda: "EAAA" + rs(B64URL, 60),
        ),
        (
            "vendor_dropbox_short_lived_sl_token",
            lambda v: 'dbx = dropbox.Dropbox("%s")\n' % v,
            lambda: "sl.u." + rs(B64URL, 140),
        ),
        (
            "vendor_mailchimp_api_key_datacenter_suffix",
            lambda v: (
                "MAILCHIMP_KEY = '%s'\nclient.set_config({'api_key': MAILCHIMP_KEY, 'server': 'us14'})\n"
                % v
            ),
            lambda: rs(HEX, 32) + "-us14",
        ),
        (
            "vendor_contentful_cma_token_space_export",
            lambda v: "contentful space export --space-id k7x9p2q4r1 --management-token %s\n" % v,
            lambda: "CFPAT-" + rs(B64URL, 43),
        ),
        (
            "vendor_netlify_pat_cli_env",
            lambda v: "NETLIFY_AUTH_TOKEN=%s netlify deploy --prod --dir=dist\n" % v,
            lambda: "nfp_" + rs(ALNUM, 36),
        ),
        (
            "vendor_render_api_key_rnd_curl",
            lambda v: (
                "curl -H 'Authorization: Bearer %s' https://api.render.com/v1/services?limit=20\n"
                % v
            ),
            lambda: "rnd_" + rs(ALNUM, 32),
        ),
        (
            "vendor_flyio_macaroon_fm2_deploy_token",
            lambda v: 'FLY_API_TOKEN="FlyV1 %s"\n' % v,
            lambda: "fm2_" + rs(B64, 180),
        ),
        (
            "vendor_gcp_oauth_client_secret_json_installed",
            lambda v: (
                '{"installed":{"client_id":"281739201-k3j4h5g6f7d8s9a0.apps.googleusercontent.com","project_id":"acme-cli","client_secret":"%s","redirect_uris":["http://localhost"]}}\n'
                % v
            ),
            gocspx,
        ),
        (
            "vendor_slack_app_level_token_socket_mode",
            lambda v: (
                "app = App(token=os.environ['SLACK_BOT_TOKEN'])\nSocketModeHandler(app, '%s').start()\n"
                % v
            ),
            slack_app,
        ),
        (
            "vendor_slack_user_token_xoxp_export_script",
            lambda v: (
                "python slack_export.py --token %s --channels general,eng --out export/\n" % v
            ),
            slack_user,
        ),
        (
            "vendor_aws_access_key_id_in_boto3_client",
            lambda v: (
                "s3 = boto3.client('s3', aws_access_key_id='%s', aws_secret_access_key=os.environ['AWS_SECRET'])\n"
                % v
            ),
            akia,
        ),
        (
            "vendor_twilio_api_key_sid_sk_pair",
            lambda v: (
                "client = Client('%s', os.environ['TWILIO_API_SECRET'], 'AC%s')\n"
                % (v, rs(HEX, 32))
            ),
            twilio_sk,
        ),
        ("vendor_discord_bot_token_discordpy_run", lambda v: "bot.run('%s')\n" % v, discord_bot),
        (
            "vendor_openai_service_account_key_jupyter_cell",
            lambda v: 'In [3]: client = OpenAI(api_key="%s")\n' % v,
            openai_svcacct,
        ),
        (
            "vendor_github_app_installation_ghs_token_log",
            lambda v: (
                "::debug::installation token acquired: %s (expires 2024-06-11T11:40:00Z)\n" % v
            ),
            lambda: ghp("ghs_"),
        ),
        (
            "vendor_github_oauth_gho_in_gh_hosts_yml",
            lambda v: (
                "github.com:\n    users:\n        octo-dev:\n            oauth_token: %s\n    git_protocol: https\n    user: octo-dev\n"
                % v
            ),
            lambda: ghp("gho_"),
        ),
        (
            "vendor_github_refresh_token_ghr_json",
            lambda v: (
                '{"access_token":"ghu_%s","expires_in":28800,"refresh_token":"%s","token_type":"bearer"}\n'
                % (rs(B62, 36), v)
            ),
            lambda: "ghr_" + rs(B62, 76),
        ),
        (
            "vendor_terraform_cloud_atlasv1_credentials_tfrc",
            lambda v: 'credentials "app.terraform.io" {\n  token = "%s"\n}\n' % v,
            lambda: rs(ALNUM, 14) + ".atlasv1." + rs(ALNUM, 67),
        ),
        (
            "vendor_doppler_service_token_cli_setup",
            lambda v: "doppler configure set token %s --scope /srv/api\n" % v,
            lambda: "dp.st.prd." + rs(ALNUM, 43),
        ),
        (
            "vendor_figma_pat_rest_header",
            lambda v: (
                "curl -H 'X-Figma-Token: %s' https://api.figma.com/v1/files/AbCdEf123456/images?ids=1:2\n"
                % v
            ),
            lambda: "figd_" + rs(B64URL, 40),
        ),
        (
            "vendor_adafruit_io_key_mqtt_password",
            lambda v: (
                "mosquitto_sub -h io.adafruit.com -p 8883 -u acme_maker -P %s -t 'acme_maker/feeds/temp'\n"
                % v
            ),
            lambda: "aio_" + rs(ALNUM, 28),
        ),
        (
            "vendor_frameio_dev_token_python",
            lambda v: 'client = FrameioClient("%s")\n' % v,
            lambda: "fio-u-" + rs(B64URL, 64),
        ),
        (
            "vendor_duffel_live_token_bearer",
            lambda v: "Authorization: Bearer %s\nDuffel-Version: v2\n" % v,
            lambda: "duffel_live_" + rs(B64URL, 43),
        ),
        (
            "vendor_readme_rdme_key_cli_openapi",
            lambda v: "rdme openapi ./openapi.yaml --key=%s --id=64a1b2c3d4e5f6a7b8c9d0e1\n" % v,
            lambda: "rdme_" + rs(HEX, 70),
        ),
        (
            "vendor_deno_deploy_ddp_token_deployctl",
            lambda v: "deployctl deploy --project=acme-edge --token=%s main.ts\n" % v,
            lambda: "ddp_" + rs(ALNUM, 36),
        ),
        (
            "vendor_neon_napi_key_console_api",
            lambda v: (
                "curl 'https://console.neon.tech/api/v2/projects' -H 'Authorization: Bearer %s'\n"
                % v
            ),
            lambda: "napi_" + rs(LALNUM, 64),
        ),
        (
            "vendor_modal_token_secret_as_prefix",
            lambda v: "modal token set --token-id ak-%s --token-secret %s\n" % (rs(ALNUM, 22), v),
            lambda: "as-" + rs(ALNUM, 22),
        ),
        (
            "vendor_langsmith_service_key_lsv2_sk",
            lambda v: 'client = Client(api_key="%s")\n' % v,
            lambda: "lsv2_sk_" + rs(HEX, 32) + "_" + rs(HEX, 10),
        ),
        (
            "vendor_grafana_cloud_glc_token_alloy",
            lambda v: (
                'prometheus.remote_write "grafanacloud" {\n  endpoint {\n    url = "https://prometheus-prod-24-prod-eu-west-2.grafana.net/api/prom/push"\n    basic_auth {\n      username = "1234567"\n      password = "%s"\n    }\n  }\n}\n'
                % v
            ),
            lambda: "glc_" + rs(B64, 120) + "==",
        ),
        (
            "vendor_sentry_org_token_sntrys_cli",
            lambda v: "sentry-cli --auth-token %s releases new 2.8.0\n" % v,
            lambda: (
                "sntrys_"
                + b64url_nopad(
                    json.dumps(
                        {
                            "iat": 1718000000,
                            "url": "https://sentry.io",
                            "region_url": "https://de.sentry.io",
                            "org": "acme",
                        }
                    ).encode()
                )
                + "_"
                + rs(B64URL, 43)
            ),
        ),
        (
            "vendor_django_insecure_key_settings_py",
            lambda v: (
                "# SECURITY WARNING: keep the secret key used in production secret!\nSECRET_KEY = '%s'\n"
                % v
            ),
            lambda: "django-insecure-" + rs(LO + DIG + "!@#%^&*(-_=+)", 50),
        ),
        (
            "vendor_azure_storage_account_key_connection_string",
            lambda v: (
                "DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey=%s;EndpointSuffix=core.windows.net\n"
                % v
            ),
            lambda: b64_secret(64),
        ),
        (
            "vendor_azure_sas_token_sig_param_azcopy",
            lambda v: (
                "azcopy copy ./dump.bak 'https://acmebak.blob.core.windows.net/db?sv=2022-11-02&ss=b&srt=co&sp=rwlac&se=2024-07-01T00:00:00Z&spr=https&sig=%s'\n"
                % v
            ),
            lambda: urllib.parse.quote(b64_secret(32), safe=""),
        ),
        (
            "vendor_gcp_service_account_private_key_json_escaped",
            lambda v: (
                '{\n  "type": "service_account",\n  "project_id": "acme-data",\n  "private_key_id": "%s",\n  "private_key": "%s",\n  "client_email": "etl@acme-data.iam.gserviceaccount.com"\n}\n'
                % (rs(HEX, 40), v)
            ),
            lambda: (
                "-----BEGIN PRIVATE KEY-----\\n"
                + "\\n".join(rs(B64, 64) for _ in range(6))
                + "\\n-----END PRIVATE KEY-----\\n"
            ),
        ),
        (
            "vendor_laravel_app_key_base64_prefix",
            lambda v: "APP_NAME=Shop\nAPP_ENV=production\nAPP_KEY=%s\nAPP_DEBUG=false\n" % v,
            lambda: "base64:" + b64_secret(32),
        ),
    ]
    for kind, tmpl, gen in rare:
        v = gen()
        add(kind, tmpl(v), v, "provider")

    # ---- rarer CLIs / config formats (context)
    ctx = [
        (
            "cli_mysqldump_inline_p_no_space",
            lambda v: (
                "mysqldump -h db-replica -u backup -p%s --single-transaction shop > shop.sql\n" % v
            ),
            pw_nosym,
        ),
        (
            "cli_pg_dump_pgpassword_prefix",
            lambda v: (
                "PGPASSWORD='%s' pg_dump -h pg.internal -U report -Fc analytics > analytics.dump\n"
                % v
            ),
            pw,
        ),
        (
            "cli_sshpass_rsync_backup",
            lambda v: (
                "sshpass -p '%s' rsync -az -e ssh /var/backups/ backup@nas.local:/volume1/backups/\n"
                % v
            ),
            pw,
        ),
        (
            "cli_7z_archive_password_flag",
            lambda v: "7z a -t7z -mhe=on -p'%s' customer-export-2024-06.7z export/\n" % v,
            pw,
        ),
        (
            "cli_openssl_enc_pass_literal",
            lambda v: (
                "openssl enc -aes-256-cbc -pbkdf2 -salt -in db.sql -out db.sql.enc -pass pass:%s\n"
                % v
            ),
            pw_nosym,
        ),
        (
            "cli_gpg_decrypt_tar_pipe_loopback_passphrase",
            lambda v: (
                "gpg --batch --yes --pinentry-mode loopback --passphrase '%s' -d secrets.tar.gpg | tar x\n"
                % v
            ),
            pw,
        ),
        (
            "cli_az_login_service_principal_password",
            lambda v: (
                "az login --service-principal -u 0b2f5e1c-9d3a-4c7e-8f21-6a4b3c2d1e0f -p %s --tenant acme.onmicrosoft.com\n"
                % v
            ),
            lambda: rs(ALNUM + "~.", 40),
        ),
        (
            "cli_rclone_config_create_pass",
            lambda v: "rclone config create nas sftp host nas.local user media pass %s\n" % v,
            pw_nosym,
        ),
        (
            "cli_smbclient_user_percent_password",
            lambda v: "smbclient //fs01/finance -U 'ACME\\\\svc_scan%%%s' -c 'ls'\n" % v,
            pw_nosym,
        ),
        (
            "cli_ldapmodify_bind_password_y_stdin_echo",
            lambda v: (
                "echo '%s' > /tmp/bindpw && ldapmodify -x -D cn=admin,dc=acme,dc=io -y /tmp/bindpw -f users.ldif\n"
                % v
            ),
            pw,
        ),
        (
            "cli_helm_repo_add_private_chartmuseum_creds",
            lambda v: (
                "helm repo add acme-charts https://charts.acme.io --username ci --password %s\n" % v
            ),
            pw_nosym,
        ),
        (
            "cli_podman_login_password_flag_quay",
            lambda v: "podman login quay.io -u 'acme+ci_robot' -p %s\n" % v,
            lambda: rs(UALNUM, 64),
        ),
        (
            "cli_snowsql_env_password",
            lambda v: "SNOWSQL_PWD='%s' snowsql -a xy12345 -u LOADER -f load.sql\n" % v,
            pw,
        ),
        (
            "cli_mongosh_password_flag_authdb",
            lambda v: (
                "mongosh \"mongodb://mongo-0.mongo:27017/admin\" --username root --password '%s' --authenticationDatabase admin\n"
                % v
            ),
            pw,
        ),
        (
            "cli_ipmitool_lanplus_password",
            lambda v: "ipmitool -I lanplus -H 10.0.9.21 -U ADMIN -P %s chassis power cycle\n" % v,
            pw_nosym,
        ),
        (
            "cli_nmcli_wifi_connect_password",
            lambda v: "nmcli dev wifi connect 'Acme-Lab' password '%s'\n" % v,
            pw,
        ),
        (
            "cli_vault_kv_put_payments_webhook_field",
            lambda v: "vault kv put secret/payments/stripe webhook_secret=%s\n" % v,
            hex_secret,
        ),
        (
            "cli_aws_configure_set_legacy_profile_secret_key",
            lambda v: "aws configure set aws_secret_access_key %s --profile legacy\n" % v,
            aws_secret,
        ),
        (
            "cli_gh_secret_set_body_single_quoted",
            lambda v: "gh secret set SENTRY_DSN_SECRET --repo acme/web --body '%s'\n" % v,
            lambda: rs(HEX, 32),
        ),
        (
            "cli_influx_auth_token_flag",
            lambda v: (
                "influx query 'from(bucket:\"iot\") |> range(start:-1h)' --org acme --token %s\n"
                % v
            ),
            lambda: rs(B64URL, 86) + "==",
        ),
        (
            "conf_netrc_machine_password",
            lambda v: "machine git.acme.io\n  login ci\n  password %s\n" % v,
            pw_nosym,
        ),
        (
            "conf_pgpass_line",
            lambda v: "# ~/.pgpass\npg-prod.internal:5432:*:reporting:%s\n" % v,
            pw_nosym,
        ),
        (
            "conf_pypirc_private_index_password",
            lambda v: (
                "[distutils]\nindex-servers = internal\n\n[internal]\nrepository = https://pypi.acme.io/\nusername = publisher\npassword = %s\n"
                % v
            ),
            pw,
        ),
        (
            "conf_maven_settings_xml_server_password",
            lambda v: (
                "<settings>\n  <servers>\n    <server>\n      <id>acme-releases</id>\n      <username>deployer</username>\n      <password>%s</password>\n    </server>\n  </servers>\n</settings>\n"
                % v
            ),
            pw,
        ),
        (
            "conf_gradle_properties_signing_password",
            lambda v: (
                "signing.keyId=24875D73\nsigning.password=%s\nsigning.secretKeyRingFile=/home/ci/.gnupg/secring.gpg\n"
                % v
            ),
            pw,
        ),
        (
            "conf_composer_auth_json_http_basic",
            lambda v: (
                '{\n  "http-basic": {\n    "repo.packagist.com": {\n      "username": "token",\n      "password": "%s"\n    }\n  }\n}\n'
                % v
            ),
            lambda: rs(HEX, 40),
        ),
        (
            "conf_bundler_config_gem_source_credentials",
            lambda v: '---\nBUNDLE_GEMS__ACME__IO: "ci:%s"\n' % v,
            pw_nosym,
        ),
        (
            "conf_pip_conf_extra_index_userinfo",
            lambda v: (
                "[global]\nextra-index-url = https://ci:%s@nexus.acme.io/repository/pypi-internal/simple\n"
                % v
            ),
            pw_nosym,
        ),
        (
            "conf_yarnrc_yml_npm_auth_ident",
            lambda v: (
                'npmScopes:\n  acme:\n    npmRegistryServer: "https://npm.acme.io"\n    npmAuthIdent: "ci:%s"\n'
                % v
            ),
            pw_nosym,
        ),
        (
            "conf_wpa_supplicant_psk",
            lambda v: (
                'network={\n    ssid="Acme-Warehouse"\n    psk="%s"\n    key_mgmt=WPA-PSK\n}\n' % v
            ),
            pw,
        ),
        (
            "conf_hostapd_wpa_passphrase",
            lambda v: "interface=wlan0\nssid=acme-kiosk\nwpa=2\nwpa_passphrase=%s\n" % v,
            pw,
        ),
        (
            "conf_openvpn_auth_user_pass_file",
            lambda v: "$ cat /etc/openvpn/client/auth.txt\nvpn-gw-ci\n%s\n" % v,
            pw,
        ),
        (
            "conf_strongswan_ipsec_secrets_psk",
            lambda v: '# /etc/ipsec.secrets\n203.0.113.10 198.51.100.20 : PSK "%s"\n' % v,
            pw_nosym,
        ),
        (
            "conf_postfix_sasl_passwd_map",
            lambda v: "[smtp.sendgrid.net]:587 apikey:%s\n" % v,
            sendgrid,
        ),
        (
            "conf_redis_conf_requirepass",
            lambda v: "bind 0.0.0.0\nprotected-mode yes\nrequirepass %s\nmaxmemory 2gb\n" % v,
            pw_nosym,
        ),
        (
            "conf_mosquitto_bridge_remote_password",
            lambda v: (
                "connection cloud-bridge\naddress mqtt.acme.io:8883\nremote_username edge-17\nremote_password %s\ntopic sensors/# out 1\n"
                % v
            ),
            pw_nosym,
        ),
        (
            "conf_pgbouncer_userlist_plaintext",
            lambda v: '"app" "%s"\n"stats" "%s"\n' % (v, rs(ALNUM, 16)),
            pw_nosym,
        ),
        (
            "conf_nginx_proxy_set_header_basic",
            lambda v: (
                "location /upstream/ {\n    proxy_pass https://partner.example.com/;\n    proxy_set_header X-Api-Key %s;\n}\n"
                % v
            ),
            lambda: rs(ALNUM, 36),
        ),
        (
            "conf_traefik_static_acme_eab_hmac",
            lambda v: (
                "certificatesResolvers:\n  zerossl:\n    acme:\n      email: ops@acme.io\n      eab:\n        kid: %s\n        hmacEncoded: %s\n"
                % (rs(B64URL, 22), v)
            ),
            lambda: rs(B64URL, 86),
        ),
        (
            "conf_docker_swarm_secret_create_echo",
            lambda v: "printf '%s' | docker secret create grafana_admin_pw -\n" % v,
            pw,
        ),
        (
            "conf_fluentbit_output_http_passwd",
            lambda v: (
                "[OUTPUT]\n    Name  es\n    Match *\n    Host  es.logging.internal\n    HTTP_User fluent\n    HTTP_Passwd %s\n"
                % v
            ),
            pw_nosym,
        ),
        (
            "conf_prometheus_basic_auth_password_scrape",
            lambda v: (
                "scrape_configs:\n  - job_name: edge\n    basic_auth:\n      username: prom\n      password: %s\n    static_configs:\n      - targets: ['edge-1:9100']\n"
                % v
            ),
            pw_nosym,
        ),
        (
            "conf_alertmanager_smtp_auth_password",
            lambda v: (
                "global:\n  smtp_smarthost: smtp.office365.com:587\n  smtp_from: alerts@acme.io\n  smtp_auth_username: alerts@acme.io\n  smtp_auth_password: '%s'\n"
                % v
            ),
            pw,
        ),
        (
            "conf_rclone_conf_s3_secret_access_key",
            lambda v: (
                "[wasabi]\ntype = s3\nprovider = Wasabi\naccess_key_id = %s\nsecret_access_key = %s\nendpoint = s3.eu-central-1.wasabisys.com\n"
                % (rs(UALNUM, 20), v)
            ),
            aws_secret,
        ),
        (
            "conf_ini_php_smtp_pass_sendmail",
            lambda v: (
                "[mail function]\nSMTP = smtp.acme.io\nsmtp_port = 587\nauth_username = web@acme.io\nauth_password = %s\n"
                % v
            ),
            pw,
        ),
        (
            "conf_hocon_akka_persistence_password",
            lambda v: (
                'jdbc-connection-settings {\n  url = "jdbc:postgresql://pg:5432/events"\n  user = "akka"\n  password = "%s"\n}\n'
                % v
            ),
            pw_nosym,
        ),
        (
            "conf_cue_secret_field",
            lambda v: 'database: {\n\thost:     "pg.internal"\n\tpassword: "%s"\n}\n' % v,
            pw_nosym,
        ),
        (
            "conf_nix_module_initial_password",
            lambda v: (
                'users.users.ops = {\n  isNormalUser = true;\n  initialPassword = "%s";\n  extraGroups = [ "wheel" ];\n};\n'
                % v
            ),
            pw,
        ),
        (
            "conf_cloud_init_chpasswd_list",
            lambda v: (
                "#cloud-config\nchpasswd:\n  list: |\n    ubuntu:%s\n  expire: false\nssh_pwauth: true\n"
                % v
            ),
            pw,
        ),
        (
            "conf_kickstart_rootpw_plaintext",
            lambda v: (
                "lang en_US.UTF-8\nkeyboard us\nrootpw --plaintext %s\ntimezone Europe/Berlin\n" % v
            ),
            pw,
        ),
        (
            "conf_unattend_xml_administrator_password",
            lambda v: (
                "<UserAccounts>\n  <AdministratorPassword>\n    <Value>%s</Value>\n    <PlainText>true</PlainText>\n  </AdministratorPassword>\n</UserAccounts>\n"
                % v
            ),
            pw,
        ),
        (
            "conf_ovpn_inline_static_key_block",
            lambda v: (
                "<tls-auth>\n-----BEGIN OpenVPN Static key V1-----\n%s\n-----END OpenVPN Static key V1-----\n</tls-auth>\n"
                % v
            ),
            lambda: "\n".join(rs(HEX, 32) for _ in range(16)),
        ),
        (
            "conf_keycloak_realm_json_client_secret",
            lambda v: (
                '{\n  "clientId": "grafana",\n  "enabled": true,\n  "clientAuthenticatorType": "client-secret",\n  "secret": "%s",\n  "redirectUris": ["https://grafana.acme.io/*"]\n}\n'
                % v
            ),
            lambda: rs(ALNUM, 32),
        ),
        (
            "conf_argo_workflows_artifact_repo_inline_key",
            lambda v: (
                "s3:\n  bucket: argo-artifacts\n  endpoint: minio.argo:9000\n  insecure: true\n  accessKey: argo\n  secretKey: %s\n"
                % v
            ),
            pw_nosym,
        ),
        (
            "conf_home_assistant_secrets_yaml",
            lambda v: "# secrets.yaml\nmqtt_password: %s\nlatitude: 52.52\n" % v,
            pw,
        ),
        (
            "conf_esphome_ota_password",
            lambda v: (
                'ota:\n  - platform: esphome\n    password: "%s"\nwifi:\n  ssid: !secret wifi_ssid\n'
                % v
            ),
            lambda: rs(HEX, 32),
        ),
        (
            "conf_sops_decrypted_output_shown",
            lambda v: (
                "$ sops -d secrets/prod.enc.yaml\npayments:\n    api_secret: %s\n    webhook_url: https://hooks.acme.io/pay\n"
                % v
            ),
            lambda: rs(ALNUM, 40),
        ),
        (
            "conf_ansible_vault_password_file_cat",
            lambda v: (
                "$ cat ~/.vault_pass.txt\n%s\n$ ansible-playbook site.yml --vault-password-file ~/.vault_pass.txt\n"
                % v
            ),
            pw,
        ),
        (
            "conf_jupyter_server_config_token",
            lambda v: (
                "c.ServerApp.ip = '0.0.0.0'\nc.ServerApp.token = '%s'\nc.ServerApp.open_browser = False\n"
                % v
            ),
            lambda: rs(HEX, 48),
        ),
        (
            "conf_vnc_passwd_x11vnc_storepasswd",
            lambda v: "x11vnc -storepasswd '%s' ~/.vnc/passwd\n" % v,
            lambda: rs(ALNUM, 8),
        ),
        (
            "conf_restic_repository_password_env",
            lambda v: (
                "export RESTIC_REPOSITORY=s3:s3.amazonaws.com/acme-backups\nexport RESTIC_PASSWORD='%s'\nrestic backup /srv\n"
                % v
            ),
            pw,
        ),
        (
            "conf_borg_passphrase_cron_line",
            lambda v: (
                "0 3 * * * BORG_PASSPHRASE='%s' borg create ::'{hostname}-{now}' /etc /srv\n" % v
            ),
            pw,
        ),
        (
            "conf_duplicity_passphrase_export",
            lambda v: (
                "export PASSPHRASE='%s'\nduplicity /home b2://keyid:appkey@acme-bak/home\n" % v
            ),
            pw,
        ),
        (
            "conf_jenkins_casc_yaml_admin_password",
            lambda v: (
                'jenkins:\n  securityRealm:\n    local:\n      users:\n        - id: admin\n          password: "%s"\n'
                % v
            ),
            pw,
        ),
        (
            "conf_sonarqube_sonar_properties_jdbc_password",
            lambda v: (
                "sonar.jdbc.username=sonar\nsonar.jdbc.password=%s\nsonar.jdbc.url=jdbc:postgresql://pg/sonar\n"
                % v
            ),
            pw_nosym,
        ),
        (
            "conf_gitea_app_ini_internal_token",
            lambda v: "[security]\nINSTALL_LOCK = true\nINTERNAL_TOKEN = %s\n" % v,
            lambda: jwt({"nbf": 1718000000}),
        ),
        (
            "conf_mattermost_config_json_at_rest_key",
            lambda v: (
                '"SqlSettings": {\n    "DriverName": "postgres",\n    "AtRestEncryptKey": "%s"\n}\n'
                % v
            ),
            lambda: rs(ALNUM, 32),
        ),
        (
            "conf_synapse_homeserver_registration_shared_secret",
            lambda v: (
                'server_name: "matrix.acme.io"\nregistration_shared_secret: "%s"\nmacaroon_secret_key: "%s"\n'
                % (v, rs(ALNUM, 50))
            ),
            lambda: rs(ALNUM + "~;:.", 50),
        ),
        (
            "conf_wireguard_preshared_key_peer",
            lambda v: (
                "[Peer]\nPublicKey = %s\nPresharedKey = %s\nAllowedIPs = 10.8.0.5/32\n"
                % (b64_secret(32), v)
            ),
            b64_secret,
        ),
        (
            "conf_rails_master_key_file_cat",
            lambda v: "$ cat config/master.key\n%s\n" % v,
            lambda: rs(HEX, 32),
        ),
        (
            "conf_sentry_relay_credentials_secret_key",
            lambda v: (
                '{\n  "secret_key": "%s",\n  "public_key": "%s",\n  "id": "%s"\n}\n'
                % (v, rs(B64URL, 43), uuid4())
            ),
            lambda: rs(B64URL, 43),
        ),
    ]
    for kind, tmpl, gen in ctx:
        v = gen()
        add(kind, tmpl(v), v, "context")


# ====================================================================
# BENIGN look-alikes
# ====================================================================
BENIGN = []
BTEXT = set()


def badd(cls, text):
    assert text not in BTEXT, text
    BTEXT.add(text)
    BENIGN.append({"source": "heldout12:" + cls, "text": text})


def sha1():
    return rs(HEX, 40)


def section_benign():
    for _ in range(9):
        badd(
            "gerrit_change_id_and_trailers",
            "%s(%s): %s\n\nChange-Id: I%s\nSigned-off-by: %s <%s@acme.io>\nReviewed-on: https://review.acme.io/c/platform/+/%d"
            % (
                R.choice(["fix", "feat", "chore", "refactor"]),
                R.choice(["auth", "db", "ci", "api"]),
                R.choice(
                    [
                        "handle empty token list",
                        "rotate keys on schedule",
                        "drop legacy password field",
                        "retry secret fetch",
                    ]
                ),
                sha1(),
                R.choice(["Jana Novak", "Li Wei", "Omar Haddad", "Eva Lind"]),
                R.choice(["jana", "li", "omar", "eva"]),
                R.randint(10000, 99999),
            ),
        )
    for _ in range(9):
        name = R.choice(
            ["lodash", "react-dom", "undici", "zod", "esbuild", "vite", "pino", "yaml", "semver"]
        )
        ver = "%d.%d.%d" % (R.randint(1, 9), R.randint(0, 20), R.randint(0, 30))
        badd(
            "npm_lockfile_integrity_hashes",
            '"node_modules/%s": {\n  "version": "%s",\n  "resolved": "https://registry.npmjs.org/%s/-/%s-%s.tgz",\n  "integrity": "sha512-%s=="\n}'
            % (name, ver, name, name, ver, rs(B64, 86)),
        )
    for _ in range(9):
        mod = R.choice(
            [
                "golang.org/x/crypto",
                "github.com/spf13/cobra",
                "google.golang.org/grpc",
                "github.com/jackc/pgx/v5",
                "go.uber.org/zap",
            ]
        )
        v = "v%d.%d.%d" % (R.randint(0, 2), R.randint(1, 40), R.randint(0, 9))
        badd(
            "go_sum_h1_lines",
            "%s %s h1:%s=\n%s %s/go.mod h1:%s=" % (mod, v, rs(B64, 43), mod, v, rs(B64, 43)),
        )
    for _ in range(9):
        img = R.choice(["postgres", "redis", "nginx", "python", "node", "grafana/grafana"])
        badd(
            "docker_image_digest_pins",
            "FROM %s:%d@sha256:%s\n# pinned by renovate" % (img, R.randint(10, 22), rs(HEX, 64))
            if R.random() < 0.5
            else "$ docker pull %s:latest\nlatest: Pulling from library/%s\nDigest: sha256:%s\nStatus: Image is up to date"
            % (img, img, rs(HEX, 64)),
        )
    for _ in range(9):
        badd(
            "uuid_request_and_trace_ids_in_logs",
            '{"level":"info","ts":"2024-06-1%dT09:%02d:11Z","msg":"request completed","request_id":"%s","trace_id":"%s","span_id":"%s","status":%d}'
            % (
                R.randint(0, 9),
                R.randint(0, 59),
                uuid4(),
                rs(HEX, 32),
                rs(HEX, 16),
                R.choice([200, 201, 204, 404]),
            ),
        )
    placeholders = [
        "changeme",
        "<your-api-key>",
        "your-password-here",
        "xxxxxxxxxxxxxxxx",
        "REPLACE_ME",
        "",
        "${DB_PASSWORD}",
        "<redacted>",
        "TODO",
        "sk-...your key...",
    ]
    envs = [
        "POSTGRES_PASSWORD",
        "OPENAI_API_KEY",
        "STRIPE_SECRET_KEY",
        "SMTP_PASSWORD",
        "GITHUB_TOKEN",
        "JWT_SECRET",
        "REDIS_PASSWORD",
        "SENDGRID_API_KEY",
        "AWS_SECRET_ACCESS_KEY",
        "ANTHROPIC_API_KEY",
    ]
    for i in range(10):
        badd(
            "env_example_placeholders",
            "# .env.example -- copy to .env and fill in\nNODE_ENV=development\nPORT=%d\n%s=%s\nLOG_LEVEL=info"
            % (3000 + i, envs[i], placeholders[i]),
        )
    for i in range(9):
        e = R.choice(envs)
        badd(
            "compose_variable_interpolation",
            "services:\n  svc%d:\n    image: acme/svc:%d.%d\n    environment:\n      %s: ${%s:?set %s in .env}\n      OTHER: ${OTHER:-default}"
            % (i, R.randint(1, 5), R.randint(0, 9), e, e, e),
        )
    refs = [
        "${{ secrets.NPM_TOKEN }}",
        "${{ secrets.DOCKERHUB_TOKEN }}",
        "$CI_JOB_TOKEN",
        "${{ secrets.GITHUB_TOKEN }}",
        "$(vault kv get -field=password secret/db)",
        "op://Engineering/Postgres Prod/password",
        "{{ .Values.db.password }}",
        "$(cat /run/secrets/db_password)",
        "{{ lookup('env', 'API_KEY') }}",
    ]
    for r in refs:
        badd(
            "ci_and_vault_secret_references",
            "      - name: Publish\n        env:\n          TOKEN: %s\n        run: ./scripts/publish.sh"
            % r,
        )
    for i in range(9):
        badd(
            "k8s_secretkeyref_and_externalsecret",
            "env:\n  - name: %s\n    valueFrom:\n      secretKeyRef:\n        name: %s\n        key: %s"
            % (
                R.choice(envs),
                R.choice(["api-env", "db-credentials", "vendor-keys"]),
                R.choice(["password", "token", "api-key", "secret"]),
            )
            if i % 2 == 0
            else "apiVersion: external-secrets.io/v1beta1\nkind: ExternalSecret\nmetadata:\n  name: app-%d\nspec:\n  secretStoreRef: {name: aws-sm, kind: ClusterSecretStore}\n  data:\n    - secretKey: password\n      remoteRef: {key: prod/app/db, property: password}"
            % i,
        )
    masks = [
        "sk_live_****************************4f2a",
        "ghp_************************************",
        "********",
        "[REDACTED]",
        "xoxb-***-***-***",
        "•••••••••••",
        "AKIA************MPLE",
        "<hidden>",
        "[FILTERED]",
    ]
    for m in masks:
        badd(
            "masked_and_redacted_values", "Config loaded: api_key=%s region=eu-west-1 retries=3" % m
        )
    prose = [
        "Password policy: at least 14 characters, one digit, rotated every 90 days. Never share it in chat.",
        "Das Passwort liegt im Team-Tresor (1Password), nicht im Repository. Bitte dort nachschauen.",
        "Le mot de passe est dans Vault sous secret/prod/db, demande l'accès à l'équipe plateforme.",
        "La contraseña nueva ya está en el gestor de secretos; no la pegues aquí.",
        "パスワードは 1Password の「本番DB」項目を参照してください。チャットには貼らないでください。",
        "密码已经更新到 Vault 里了，路径是 secret/data/prod/mysql，不要发在群里。",
        "Пароль лежит в Bitwarden, коллекция «Инфраструктура». Сюда не пишите.",
        "Senha atualizada no cofre; peça acesso ao time de plataforma se precisar.",
        "토큰은 GitHub Actions 시크릿에 저장되어 있습니다. 코드에 넣지 마세요.",
        "Token dostępowy jest w menedżerze haseł, wpis „CI / npm publish”.",
    ]
    for p_ in prose:
        badd("password_policy_and_pointer_prose", p_)
    for _ in range(9):
        kt = R.choice(
            [
                "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + rs(B64, 43),
                "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ" + rs(B64, 200),
            ]
        )
        badd(
            "ssh_public_keys_and_known_hosts",
            "%s %s@%s"
            % (kt, R.choice(["deploy", "ci", "jana"]), R.choice(["laptop", "build-3", "bastion"]))
            if R.random() < 0.5
            else "github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI%s\n|1|%s=|%s= ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAI%s="
            % (rs(B64, 43), rs(B64, 27), rs(B64, 27), rs(B64, 60)),
        )
    for _ in range(9):
        fp = rs(UHEX, 40)
        badd(
            "pgp_fingerprints_and_key_ids",
            "pub   ed25519 2023-0%d-1%d [SC]\n      %s\nuid           [ultimate] Release Signing <releases@acme.io>\nsub   cv25519 [E]"
            % (R.randint(1, 9), R.randint(0, 9), fp),
        )
    for _ in range(8):
        badd(
            "public_certificate_pem",
            "$ openssl s_client -connect api.acme.io:443 -showcerts </dev/null | sed -n '/BEGIN/,/END/p' | head -4\n-----BEGIN CERTIFICATE-----\nMIIF%s\n%s\n-----END CERTIFICATE-----"
            % (rs(B64, 60), rs(B64, 64)),
        )
    for _ in range(9):
        badd(
            "stripe_and_payment_object_ids",
            "refund created for %s (customer %s, charge %s, price %s, event %s)"
            % (
                "pi_" + rs(ALNUM, 24),
                "cus_" + rs(ALNUM, 14),
                "ch_" + rs(ALNUM, 24),
                "price_" + rs(ALNUM, 24),
                "evt_" + rs(ALNUM, 24),
            ),
        )
    for _ in range(9):
        badd(
            "oauth_public_client_ids",
            R.choice(
                [
                    "GOOGLE_CLIENT_ID=%d-%s.apps.googleusercontent.com"
                    % (R.randint(10**11, 10**12), rs(LALNUM, 32)),
                    "GitHub App client ID: Iv1.%s (app id %d)"
                    % (rs(HEX, 16), R.randint(100000, 999999)),
                    "azure: { tenantId: '%s', clientId: '%s' }" % (uuid4(), uuid4()),
                ]
            ),
        )
    for _ in range(9):
        badd(
            "base64_data_uris_and_plain_payloads",
            R.choice(
                [
                    '<img alt="logo" src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA%s=" />'
                    % rs(B64, 120),
                    "echo %s | base64 -d\n%s"
                    % (
                        None or b64(("hello from build %d" % R.randint(100, 999)).encode()),
                        "hello from build",
                    ),
                    "font-face { src: url(data:font/woff2;base64,d09GMgABAAAAA%s) }" % rs(B64, 100),
                ]
            )
            + "\n<!-- %d -->" % R.randint(1, 10**6),
        )
    for _ in range(9):
        f = R.choice(
            [
                "acme-cli_linux_amd64.tar.gz",
                "acme-cli_darwin_arm64.tar.gz",
                "installer.msi",
                "model.safetensors",
                "dump.sql.zst",
            ]
        )
        badd(
            "checksum_files_and_sha256sum_output",
            "$ sha256sum %s\n%s  %s\n$ sha1sum %s\n%s  %s" % (f, rs(HEX, 64), f, f, sha1(), f),
        )
    for _ in range(9):
        badd(
            "aws_arns_and_resource_ids",
            "arn:aws:secretsmanager:eu-west-1:%d:secret:prod/app/db-%s\narn:aws:iam::%d:role/ci-deploy\ninstance i-0%s in %s (sg-0%s)"
            % (
                R.randint(10**11, 10**12 - 1),
                rs(ALNUM, 6),
                R.randint(10**11, 10**12 - 1),
                rs(HEX, 16),
                "vpc-0" + rs(HEX, 16),
                rs(HEX, 16),
            ),
        )
    for _ in range(9):
        badd(
            "llm_session_token_usage_notes",
            R.choice(
                [
                    "Session summary: %d input tokens, %d output tokens, cache hit rate %d%%."
                    % (R.randint(1000, 90000), R.randint(100, 9000), R.randint(10, 90)),
                    "Set max_tokens=%d and temperature=0.%d; the tokenizer counts %d tokens for the prompt."
                    % (R.choice([256, 1024, 4096]), R.randint(0, 9), R.randint(100, 5000)),
                    "Rate limit: %d tokens per minute; retry-after header was %ds."
                    % (R.choice([40000, 80000, 200000]), R.randint(1, 60)),
                ]
            ),
        )
    for t_ in [
        "Rotated the staging Stripe key after the leak report; new value is only in the secret manager.",
        "Agent note: the deploy failed because GITHUB_TOKEN lacked the packages:write scope. Asked the user to add it in repo settings.",
        "Removed the hardcoded password from settings.py and read it from the environment instead.",
        "chore(security): revoke old npm token, CI now uses OIDC trusted publishing",
        "Handover: credentials for the partner SFTP are in Vault at secret/partners/sftp; ask Omar for access.",
        "fix(auth): compare HMAC signatures with hmac.compare_digest instead of ==",
        "Nota de sesión: el usuario regeneró su token de GitHub; no se guardó ningún valor.",
        "Sitzungsnotiz: API-Schlüssel wird aus ~/.config/acme/credentials gelesen, nichts im Repo.",
        "docs: explain how to set OPENAI_API_KEY locally (never commit it)",
    ]:
        badd("rotation_and_secret_handling_notes_without_values", t_)
    for t_ in [
        'password = getpass.getpass("DB password: ")',
        'api_key = os.environ["OPENAI_API_KEY"]',
        'read -rsp "Vault token: " VAULT_TOKEN && export VAULT_TOKEN',
        'const token = process.env.GITHUB_TOKEN ?? throwMissing("GITHUB_TOKEN");',
        'String pw = System.getenv("SMTP_PASSWORD");',
        'password := os.Getenv("PGPASSWORD")',
        'echo "$REGISTRY_PASSWORD" | docker login ghcr.io -u "$GITHUB_ACTOR" --password-stdin',
        '$secret = Read-Host -AsSecureString "Client secret"',
        'let key = std::env::var("ANTHROPIC_API_KEY").expect("set ANTHROPIC_API_KEY");',
    ]:
        badd("credential_reading_code_no_literal", t_)
    for t_ in [
        "git clone git@github.com:acme/infra.git",
        "ssh://deploy@bastion.acme.io:2222/srv/app.git",
        "https://jana@dev.azure.com/acme/platform/_git/platform",
        "postgres://app@localhost:5432/app_dev",
        "redis://localhost:6379/0",
        "mongodb://mongo-0.mongo,mongo-1.mongo/?replicaSet=rs0",
        "amqp://guest@localhost:5672//",
        "sftp://backup@nas.local/volume1",
        "jdbc:postgresql://localhost:5432/test?user=test",
    ]:
        badd("urls_with_user_but_no_password", "remote: " + t_)
    for _ in range(9):
        badd(
            "bundler_content_hashes",
            "dist/assets/index-%s.js   %d.%02d kB │ gzip: %d.%02d kB\ndist/assets/vendor-%s.css  %d.%02d kB"
            % (
                rs(ALNUM + "_-", 8),
                R.randint(10, 900),
                R.randint(0, 99),
                R.randint(5, 200),
                R.randint(0, 99),
                rs(ALNUM + "_-", 8),
                R.randint(1, 90),
                R.randint(0, 99),
            ),
        )
    for t_ in [
        "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE  # from the AWS docs",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY  (documentation example)",
        "Example: Authorization: Bearer <ACCESS_TOKEN>",
        "curl -u username:password https://example.com/api  # replace with your own",
        "STRIPE_SECRET_KEY=sk_test_xxxxxxxxxxxxxxxxxxxxxxxx",
        "export GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "postgresql://user:password@localhost:5432/dbname",
        "OPENAI_API_KEY=sk-...  # put your key here",
    ]:
        badd("documented_example_placeholders", t_)
    for _ in range(8):
        badd(
            "git_lfs_pointer_files",
            "version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d"
            % (rs(HEX, 64), R.randint(1000, 10**9)),
        )
    for _ in range(9):
        badd(
            "terraform_state_ids",
            '{\n  "version": 4,\n  "terraform_version": "1.%d.%d",\n  "serial": %d,\n  "lineage": "%s",\n  "outputs": {"bucket_arn": {"value": "arn:aws:s3:::acme-logs-%s"}}\n}'
            % (R.randint(5, 9), R.randint(0, 5), R.randint(1, 900), uuid4(), rs(LALNUM, 6)),
        )
    for _ in range(9):
        badd(
            "webhook_signature_verification_code",
            R.choice(
                [
                    "sig = request.headers['X-Hub-Signature-256']\nexpected = 'sha256=' + hmac.new(secret, body, hashlib.sha256).hexdigest()\nok = hmac.compare_digest(sig, expected)",
                    "event = stripe.Webhook.construct_event(payload, request.headers['Stripe-Signature'], endpoint_secret)",
                    "const valid = verify(req.headers['x-slack-signature'], req.headers['x-slack-request-timestamp'], rawBody, signingSecret);",
                ]
            )
            + "\n# case %d" % R.randint(1, 10**6),
        )
    for _ in range(9):
        badd(
            "jwks_public_rsa_modulus",
            '{"keys":[{"kty":"RSA","use":"sig","kid":"%s","alg":"RS256","e":"AQAB","n":"%s"}]}'
            % (rs(B64URL, 43), rs(B64URL, 342)),
        )
    for _ in range(9):
        badd(
            "chat_and_issue_ids",
            "Posted in channel C0%s (thread ts %d.%06d); Discord message %d; Sentry issue %s"
            % (
                rs(UALNUM, 9),
                R.randint(1700000000, 1720000000),
                R.randint(0, 999999),
                R.randint(10**17, 10**18),
                rs(HEX, 32),
            ),
        )
    for _ in range(9):
        badd(
            "password_hashing_parameters",
            R.choice(
                [
                    "PASSWORD_HASHERS = ['django.contrib.auth.hashers.Argon2PasswordHasher']  # time_cost=%d memory_cost=%d"
                    % (R.randint(2, 4), R.choice([65536, 102400])),
                    "bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=%d))"
                    % R.randint(10, 14),
                    "scrypt params: N=%d r=8 p=1 keylen=64" % R.choice([16384, 32768, 65536]),
                ]
            )
            + "  # v%d" % R.randint(1, 10**5),
        )
    for _ in range(9):
        badd(
            "semver_build_and_commit_metadata",
            "acme-cli version %d.%d.%d+build.%d (commit %s, built %s)"
            % (
                R.randint(0, 5),
                R.randint(0, 30),
                R.randint(0, 20),
                R.randint(100, 9999),
                rs(HEX, 12),
                "2024-06-%02dT%02d:00:00Z" % (R.randint(1, 28), R.randint(0, 23)),
            ),
        )
    for t_ in [
        "Enter the 6-digit code from your authenticator app.",
        "Your verification code expires in 10 minutes.",
        "2FA is now required for all org members; set it up under Settings > Password and authentication.",
        "Zwei-Faktor-Authentifizierung ist ab Montag Pflicht.",
        "L'authentification à deux facteurs est désormais obligatoire.",
        "recovery codes were regenerated; the old ones no longer work",
        "WebAuthn: registered security key 'YubiKey 5C'",
        "Use a passkey instead of a password where supported.",
        "Backup codes: stored offline by the account owner.",
    ]:
        badd("mfa_and_recovery_prose_without_codes", t_)
    for _ in range(9):
        badd(
            "crypto_addresses_and_public_ids",
            R.choice(
                [
                    "Send testnet funds to tb1q%s" % rs(BECH, 38),
                    "Contract deployed at 0x%s (tx 0x%s)" % (rs(HEX, 40), rs(HEX, 64)),
                    "age recipient: age1%s" % rs(BECH, 58),
                ]
            ),
        )
    for t_ in [
        "refactor(tokenizer): split BPE merges into a separate file",
        "feat(auth): add password reset email template",
        "fix: secret_key_base was missing in test env config (now read from ENV)",
        "chore(deps): bump passport-jwt from 4.0.0 to 4.0.1",
        "test: cover expired token path in middleware",
        "docs(security): document key rotation procedure",
        "feat(api): add /v1/tokens endpoint for listing token metadata (ids only)",
        "fix(ui): hide password field value in logs",
        "ci: switch to OIDC for AWS, delete long-lived access keys",
    ]:
        badd("commit_subjects_with_secret_words", t_)
    for _ in range(8):
        badd(
            "kms_and_key_identifiers",
            R.choice(
                [
                    'kms_key_id = "arn:aws:kms:eu-west-1:%d:key/%s"'
                    % (R.randint(10**11, 10**12 - 1), uuid4()),
                    "gcloud kms keys versions list --key projects/acme/locations/global/keyRings/app/cryptoKeys/%s"
                    % rs(LO, 8),
                    "Key Vault key id: https://acme-kv.vault.azure.net/keys/signing/%s"
                    % rs(HEX, 32),
                ]
            ),
        )


def main():
    section_env()
    section_dsn()
    section_http()
    section_code()
    section_chat()
    section_logs()
    section_tail()
    section_benign()

    # checks
    for rec in CORPUS:
        assert rec["secret"] in rec["text"]
        for p in rec.get("parts", []):
            assert p in rec["text"]
    assert len({r["kind"] for r in CORPUS}) == len(CORPUS)
    assert len({b["text"] for b in BENIGN}) == len(BENIGN)
    secrets = [r["secret"] for r in CORPUS]
    for b in BENIGN:
        for s in secrets:
            assert s not in b["text"]

    with open(os.path.join(HERE, "corpus_heldout12.jsonl"), "w", encoding="utf-8") as f:
        for rec in CORPUS:
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    with open(os.path.join(HERE, "benign_heldout12.jsonl"), "w", encoding="utf-8") as f:
        for rec in BENIGN:
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")

    shapes = {}
    for r in CORPUS:
        shapes[r["shape"]] = shapes.get(r["shape"], 0) + 1
    classes = {}
    for b in BENIGN:
        classes[b["source"]] = classes.get(b["source"], 0) + 1
    print("corpus:", len(CORPUS), "by shape:", shapes)
    print("benign:", len(BENIGN), "classes:", len(classes))
    for c, n in sorted(classes.items()):
        print("  %-60s %d" % (c, n))


if __name__ == "__main__":
    main()
