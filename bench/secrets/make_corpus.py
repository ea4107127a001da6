"""Generate bench/secrets/corpus.jsonl: realistic FAKE credentials in developer-style text.

Every secret is built from random bytes shaped like the provider's documented token format
(prefix, length, alphabet, checksum-free).  None is a real key.  The generator is seeded, so
running it again gives the same corpus.

    python bench/secrets/make_corpus.py            # writes corpus.jsonl next to this file
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import string
import uuid
from collections.abc import Callable
from pathlib import Path

R = random.Random(20240611)

ALNUM = string.ascii_letters + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
BASE32 = string.ascii_uppercase + "234567"


def rs(n: int, alphabet: str = ALNUM) -> str:
    return "".join(R.choice(alphabet) for _ in range(n))


def b64(nbytes: int, url: bool = False, pad: bool = True) -> str:
    raw = R.randbytes(nbytes)
    out = base64.urlsafe_b64encode(raw).decode() if url else base64.b64encode(raw).decode()
    return out if pad else out.rstrip("=")


def b64s(data: bytes, url: bool = True) -> str:
    enc = base64.urlsafe_b64encode(data) if url else base64.b64encode(data)
    return enc.decode().rstrip("=")


def uid() -> str:
    return str(uuid.UUID(bytes=R.randbytes(16), version=4))


def digits(n: int) -> str:
    return str(R.randint(1, 9)) + rs(n - 1, string.digits)


WORDS = [
    "summer",
    "falcon",
    "orange",
    "winter",
    "dragon",
    "monkey",
    "rocket",
    "purple",
    "coffee",
    "tiger",
    "shadow",
    "harbor",
    "maple",
    "cobalt",
    "sunset",
    "marble",
    "granite",
    "velvet",
]
SYMBOLS = "!@#$%&*?"


def human_password() -> str:
    """A password a person typed: word(s), digits, a symbol."""
    style = R.randrange(5)
    w1, w2 = R.choice(WORDS), R.choice(WORDS)
    if style == 0:
        return f"{w1.capitalize()}{R.randint(1990, 2025)}{R.choice(SYMBOLS)}"
    if style == 1:
        leet = w1.replace("o", "0").replace("e", "3").replace("a", "@")
        return f"{leet.capitalize()}{R.choice(SYMBOLS)}{R.randint(10, 99)}"
    if style == 2:
        return f"{w1}-{w2}-{R.choice(WORDS)}-{R.randint(1, 9)}"
    if style == 3:
        return rs(R.randint(14, 20), ALNUM + "!@#%^*-_")
    return f"{w1.capitalize()}{w2.capitalize()}{R.randint(100, 999)}{R.choice(SYMBOLS)}"


def random_password(n: int = 16) -> str:
    while True:
        p = rs(n, ALNUM + "!%^*-_+=.")
        if any(c.isdigit() for c in p) and any(c.isupper() for c in p):
            return p


USERS = ["deploy", "admin", "app", "ci-bot", "svc_backend", "jenkins", "alice", "mkowalski", "root"]
HOSTS = [
    "db.internal.acme.io",
    "10.0.3.17",
    "pg-prod-1.c9xk2.eu-west-1.rds.amazonaws.com",
    "mysql.staging.corp.local",
    "localhost",
    "redis-master.cache.svc.cluster.local",
    "mq.payments.example.net",
]
SERVICES = ["billing", "orders", "auth", "search", "ingest", "notifier", "reports"]


def common() -> dict[str, str]:
    return {
        "u": R.choice(USERS),
        "h": R.choice(HOSTS),
        "svc": R.choice(SERVICES),
        "sha": rs(7, HEX),
        "n": str(R.randint(2, 480)),
        "port": str(R.choice([5432, 3306, 6379, 5672, 27017, 8443, 9200])),
        "ts": f"2024-{R.randint(1, 12):02d}-{R.randint(1, 28):02d}T{R.randint(0, 23):02d}:"
        f"{R.randint(0, 59):02d}:{R.randint(0, 59):02d}Z",
        "acct": R.choice(["acmeprod", "stdatalake01", "webassetscdn", "mlartifacts"]),
        "ns": R.choice(["acme-bus", "orders-sb-prod", "telemetry-ns"]),
        "db": R.choice(["app", "orders", "analytics", "postgres"]),
        "uuid": uid(),
    }


Gen = Callable[[], dict[str, str]]
KINDS: dict[str, tuple[Gen, list[str]]] = {}


def kind(name: str, templates: list[str]) -> Callable[[Gen], Gen]:
    def deco(fn: Gen) -> Gen:
        KINDS[name] = (fn, templates)
        return fn

    return deco


def S(value: str, **extra: str) -> dict[str, str]:
    return {"s": value, **extra}


# ---------------------------------------------------------------- cloud providers


@kind(
    "aws_access_key_id",
    [
        "export AWS_ACCESS_KEY_ID={s}",
        "[default]\naws_access_key_id = {s}\naws_secret_access_key = {sk}",
        "fix(ci): the deploy job used access key {s} from the old IAM user; rotated it",
        "Using credentials for {s} (user arn:aws:iam::{acct_no}:user/{u})",
        '{{"AccessKeyId": "{s}", "SecretAccessKey": "{sk}", "Expiration": "{ts}"}}',
    ],
)
def _aws_akid() -> dict[str, str]:
    pre = R.choice(["AKIA", "AKIA", "AKIA", "ASIA"])
    return S(pre + rs(16, BASE32), sk=b64(30), acct_no=digits(12))


@kind(
    "aws_secret_access_key",
    [
        "AWS_SECRET_ACCESS_KEY={s}",
        "aws configure set aws_secret_access_key {s} --profile staging",
        "secretAccessKey: '{s}'",
        "  SecretAccessKey: {s}",
        "  --env AWS_SECRET_ACCESS_KEY='{s}' \\",
    ],
)
def _aws_secret() -> dict[str, str]:
    return S(b64(30))


@kind(
    "aws_secret_in_prose",
    [
        "the secret key is {s} (access key {akid}), it belongs to the terraform user",
        "Note to self: S3 creds for the backup bucket -> {akid} / {s}",
        "IAM user {u} -- key id {akid}, secret {s}; delete after migration",
        "boto kept failing until I passed {s} as the secret instead of the session token",
    ],
)
def _aws_secret_prose() -> dict[str, str]:
    return S(b64(30), akid="AKIA" + rs(16, BASE32))


@kind(
    "aws_session_token",
    [
        "export AWS_SESSION_TOKEN={s}",
        "aws_session_token = {s}",
        '"SessionToken": "{s}",',
    ],
)
def _aws_session() -> dict[str, str]:
    return S("FwoGZXIvYXdzE" + b64(260).rstrip("="))


@kind(
    "gcp_service_account_key",
    [
        '  "private_key_id": "{kid}",\n  "private_key": "-----BEGIN PRIVATE KEY-----\\n{s}\\n'
        '-----END PRIVATE KEY-----\\n",\n  "client_email": "{u}@{proj}.iam.gserviceaccount.com",',
        '{{"type": "service_account", "project_id": "{proj}", "private_key": '
        '"-----BEGIN PRIVATE KEY-----\\n{s}\\n-----END PRIVATE KEY-----\\n"}}',
        'Pasted sa.json into the secret: "private_key": "-----BEGIN PRIVATE KEY-----\\n{s}\\n'
        '-----END PRIVATE KEY-----\\n"',
    ],
)
def _gcp_sa() -> dict[str, str]:
    body = base64.b64encode(b"\x30\x82\x04\xbe\x02\x01\x00\x30\x0d\x06\x09" + R.randbytes(120))
    text = body.decode()
    lines = "\\n".join(text[i : i + 64] for i in range(0, len(text), 64))
    return S(lines, kid=rs(40, HEX), proj=R.choice(["acme-prod-3121", "ml-sandbox", "web-419"]))


@kind(
    "google_api_key",
    [
        "GOOGLE_MAPS_API_KEY={s}",
        "curl 'https://maps.googleapis.com/maps/api/geocode/json?address=Berlin&key={s}'",
        "the YouTube Data API key {s} hit its quota again",
        '  apiKey: "{s}",\n  authDomain: "{proj}.firebaseapp.com",',
    ],
)
def _google_api() -> dict[str, str]:
    return S("AIza" + rs(35, B64URL), proj=R.choice(["acme-web", "chatapp-4f1e", "shop-prod"]))


@kind(
    "google_oauth_client_secret",
    [
        "GOOGLE_CLIENT_SECRET={s}",
        '{{"web":{{"client_id":"{cid}.apps.googleusercontent.com","client_secret":"{s}"}}}}',
        "OAuth client for the login button: id {cid}.apps.googleusercontent.com, secret {s}",
        "client_secret: {s}",
    ],
)
def _gocspx() -> dict[str, str]:
    return S("GOCSPX-" + rs(28, B64URL), cid=digits(12) + "-" + rs(32, LOWER_ALNUM))


@kind(
    "google_oauth_token",
    [
        "Authorization: Bearer {s}",
        "got access token {s} from the playground, expires in 3599s",
        "refresh_token={rt}&access_token={s}",
    ],
)
def _ya29() -> dict[str, str]:
    return S("ya29.a0" + rs(R.randint(150, 200), B64URL), rt="1//0" + rs(100, B64URL))


@kind(
    "azure_storage_connection_string",
    [
        "AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName={acct};"
        "AccountKey={s};EndpointSuffix=core.windows.net",
        '"AzureWebJobsStorage": "DefaultEndpointsProtocol=https;AccountName={acct};AccountKey={s}"',
        'az storage blob upload --connection-string "DefaultEndpointsProtocol=https;'
        'AccountName={acct};AccountKey={s};EndpointSuffix=core.windows.net" -f out.csv -c exports',
        "used AccountKey={s} for the {acct} account while testing the uploader",
    ],
)
def _azure_storage() -> dict[str, str]:
    return S(b64(64))


@kind(
    "azure_service_bus_connection_string",
    [
        "SERVICEBUS_CONN=Endpoint=sb://{ns}.servicebus.windows.net/;"
        "SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={s}",
        '"ServiceBusConnection": "Endpoint=sb://{ns}.servicebus.windows.net/;'
        'SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={s}"',
        "Event Hub listener: Endpoint=sb://{ns}.servicebus.windows.net/;SharedAccessKeyName=listen;"
        "SharedAccessKey={s};EntityPath=telemetry",
    ],
)
def _azure_sb() -> dict[str, str]:
    if R.random() < 0.3:  # identifiable key format (+ASb signature)
        return S(rs(33, ALNUM + "+/") + "+ASb" + rs(5, ALNUM) + R.choice("AQgw") + "=")
    return S(b64(32))


@kind(
    "azure_sas_token",
    [
        "https://{acct}.blob.core.windows.net/exports/report.csv?sv=2022-11-02&ss=b&srt=co&sp=rl"
        "&se=2025-12-31T23:59:59Z&st=2024-01-01T00:00:00Z&spr=https&sig={s}",
        "azcopy copy ./dist 'https://{acct}.blob.core.windows.net/$web?sp=racwdl&st={ts}"
        "&se=2025-06-30T00:00:00Z&spr=https&sv=2022-11-02&sr=c&sig={s}' --recursive",
        "SAS for the container: ?sv=2021-08-06&sr=c&sig={s}&se=2025-01-01&sp=rwl",
    ],
)
def _azure_sas() -> dict[str, str]:
    raw = b64(32)
    return S(raw.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D"))


@kind(
    "azure_ad_client_secret",
    [
        "AZURE_CLIENT_SECRET={s}",
        "az login --service-principal -u {cid} -p {s} --tenant {tid}",
        "app registration secret (expires 2025-09): {s}",
    ],
)
def _azure_ad() -> dict[str, str]:
    return S(rs(3, ALNUM) + "8Q~" + rs(34, ALNUM + "_~.-"), cid=uid(), tid=uid())


@kind(
    "digitalocean_token",
    [
        "DIGITALOCEAN_ACCESS_TOKEN={s}",
        "doctl auth init --access-token {s}",
        'token = "{s}"  # do provider',
        "the DO token {s} only has read scope, that's why the droplet create failed",
    ],
)
def _do() -> dict[str, str]:
    return S(R.choice(["dop_v1_", "dop_v1_", "doo_v1_"]) + rs(64, HEX))


@kind(
    "heroku_api_key",
    [
        "HEROKU_API_KEY={s}",
        "heroku authorizations:create printed Token: {s}",
        "git push https://heroku:{s}@git.heroku.com/{svc}-prod.git main",
    ],
)
def _heroku() -> dict[str, str]:
    if R.random() < 0.5:
        return S("HRKU-AA" + rs(58, B64URL))
    return S(uid())


@kind(
    "cloudflare_api_token",
    [
        "CLOUDFLARE_API_TOKEN={s}",
        "curl -H 'Authorization: Bearer {s}' https://api.cloudflare.com/client/v4/user/tokens/verify",
        "wrangler kept asking to log in, set CF token {s} in the CI env instead",
    ],
)
def _cf_token() -> dict[str, str]:
    return S(rs(40, B64URL))


@kind(
    "cloudflare_global_api_key",
    [
        "X-Auth-Email: {u}@acme.io\nX-Auth-Key: {s}",
        "CF_API_KEY={s}",
    ],
)
def _cf_global() -> dict[str, str]:
    return S(rs(37, HEX))


@kind(
    "firebase_fcm_server_key",
    [
        "FCM_SERVER_KEY={s}",
        "Authorization: key={s}",
        "push notifications: legacy server key {s} (moving to HTTP v1 next sprint)",
    ],
)
def _fcm() -> dict[str, str]:
    return S("AAAA" + rs(7, B64URL) + ":APA91b" + rs(134, B64URL))


@kind(
    "firebase_ci_token",
    [
        "firebase deploy --token {s}",
        "FIREBASE_TOKEN={s}",
    ],
)
def _firebase_ci() -> dict[str, str]:
    return S("1//0" + rs(2, ALNUM) + rs(97, B64URL))


# ---------------------------------------------------------------- code hosting / registries


@kind(
    "github_classic_pat",
    [
        "git remote set-url origin https://{s}@github.com/acme/{svc}.git",
        "GITHUB_TOKEN={s}",
        "echo {s} | gh auth login --with-token",
        "chore: revert accidental commit of token {s} in scripts/release.sh",
        "  github_token: {s}",
    ],
)
def _ghp() -> dict[str, str]:
    return S(R.choice(["ghp_", "ghp_", "gho_", "ghs_", "ghu_"]) + rs(36))


@kind(
    "github_fine_grained_pat",
    [
        "GH_TOKEN={s}",
        "used a fine-grained PAT ({s}) limited to the infra repo",
        'curl -H "Authorization: Bearer {s}" https://api.github.com/repos/acme/{svc}/actions/runs',
    ],
)
def _github_pat() -> dict[str, str]:
    return S("github_pat_11" + rs(20, UPPER_ALNUM) + "_" + rs(59))


@kind(
    "gitlab_pat",
    [
        "git clone https://oauth2:{s}@gitlab.com/acme/{svc}.git",
        "export GITLAB_TOKEN={s}",
        "glab auth login --token {s}",
        "The renovate bot uses glpat token {s}; scope api, expires {ts}",
        "PRIVATE-TOKEN: {s}",
    ],
)
def _glpat() -> dict[str, str]:
    if R.random() < 0.25:
        return S("glpat-" + rs(27, B64URL) + ".01." + rs(9, LOWER_ALNUM))
    return S("glpat-" + rs(20, B64URL))


@kind(
    "gitlab_runner_token",
    [
        "gitlab-runner register --url https://gitlab.acme.io --token {s}",
        '  token = "{s}"',
    ],
)
def _glrt() -> dict[str, str]:
    return S("glrt-" + rs(20, B64URL))


@kind(
    "bitbucket_app_password",
    [
        "BITBUCKET_APP_PASSWORD={s}",
        "git clone https://{u}:{s}@bitbucket.org/acme/{svc}.git",
    ],
)
def _bb() -> dict[str, str]:
    return S("ATBB" + rs(32) + rs(8, HEX).upper())


@kind(
    "npm_token",
    [
        "//registry.npmjs.org/:_authToken={s}",
        "npm publish failed with E401 until I swapped in the automation token {s}",
        "NPM_TOKEN={s} npm publish --access public",
        "the npm token is {s} - it is an automation token so 2FA is skipped",
        "set `{s}` as NODE_AUTH_TOKEN in the repo secrets",
    ],
)
def _npm() -> dict[str, str]:
    return S("npm_" + rs(36))


@kind(
    "pypi_token",
    [
        "[pypi]\n  username = __token__\n  password = {s}",
        "twine upload -u __token__ -p {s} dist/*",
        "TWINE_PASSWORD={s}",
        "uploaded 1.4.2 with the project-scoped token {s}",
    ],
)
def _pypi() -> dict[str, str]:
    ident = uid().encode()
    raw = (
        b"\x02\x01\x08pypi.org\x02\x24"
        + ident
        + b"\x00\x02\x2a"
        + b'[1,["'
        + R.randbytes(6).hex().encode()
        + b'"],null]'
        + b"\x00\x00\x06\x20"
        + R.randbytes(32)
    )
    return S("pypi-" + b64s(raw))


@kind(
    "rubygems_api_key",
    [
        "GEM_HOST_API_KEY={s}",
        "---\n:rubygems_api_key: {s}",
    ],
)
def _rubygems() -> dict[str, str]:
    return S("rubygems_" + rs(48, HEX))


@kind(
    "docker_hub_pat",
    [
        "echo {s} | docker login -u {u} --password-stdin",
        "DOCKERHUB_TOKEN={s}",
        "docker login -u acmebot -p {s} docker.io",
        "registry creds: acmebot / {s}",
    ],
)
def _dckr() -> dict[str, str]:
    return S("dckr_pat_" + rs(27, B64URL))


@kind(
    "hashicorp_vault_token",
    [
        "export VAULT_TOKEN={s}",
        "vault login {s}",
        "root token after unseal: {s} (revoke once the approle is configured)",
        "X-Vault-Token: {s}",
    ],
)
def _hvs() -> dict[str, str]:
    if R.random() < 0.5:
        return S("hvs." + rs(24))
    return S("hvs.CAESI" + rs(86, B64URL))


@kind(
    "terraform_cloud_token",
    [
        'credentials "app.terraform.io" {{\n  token = "{s}"\n}}',
        "TF_TOKEN_app_terraform_io={s}",
    ],
)
def _tfc() -> dict[str, str]:
    return S(rs(14) + ".atlasv1." + rs(67, B64URL))


@kind(
    "doppler_token",
    [
        "DOPPLER_TOKEN={s}",
        "doppler configure set token {s} --scope /srv/app",
        "service token for prd config: {s}",
    ],
)
def _doppler() -> dict[str, str]:
    return S(R.choice(["dp.pt.", "dp.st.prd.", "dp.st.dev."]) + rs(43))


@kind("pulumi_token", ["PULUMI_ACCESS_TOKEN={s}", "pulumi login with token {s} worked"])
def _pulumi() -> dict[str, str]:
    return S("pul-" + rs(40, HEX))


@kind("postman_api_key", ["POSTMAN_API_KEY={s}", "newman run ... --postman-api-key {s}"])
def _postman() -> dict[str, str]:
    return S("PMAK-" + rs(24, HEX) + "-" + rs(34, HEX))


@kind("age_secret_key", ["# created: {ts}\n# public key: age1{pub}\n{s}"])
def _age() -> dict[str, str]:
    bech = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
    return S("AGE-SECRET-KEY-1" + rs(58, bech), pub=rs(58, bech.lower()))


# ---------------------------------------------------------------- AI providers


@kind(
    "openai_api_key",
    [
        "OPENAI_API_KEY={s}",
        'openai.api_key = "{s}"',
        "tested the summariser with my personal key {s}, remember to swap it for the org one",
        'curl https://api.openai.com/v1/models -H "Authorization: Bearer {s}"',
        "error 429 from openai for key {s} -- quota exceeded",
    ],
)
def _openai() -> dict[str, str]:
    r = R.random()
    if r < 0.3:
        return S("sk-" + rs(20) + "T3BlbkFJ" + rs(20))
    if r < 0.8:
        return S("sk-proj-" + rs(74, B64URL) + "T3BlbkFJ" + rs(74, B64URL))
    return S("sk-svcacct-" + rs(74, B64URL) + "T3BlbkFJ" + rs(74, B64URL))


@kind(
    "anthropic_api_key",
    [
        "ANTHROPIC_API_KEY={s}",
        'client = anthropic.Anthropic(api_key="{s}")',
        "the eval harness reads {s} from .env.local; don't commit that file",
        "x-api-key: {s}",
    ],
)
def _anthropic() -> dict[str, str]:
    return S("sk-ant-" + R.choice(["api03-", "api03-", "admin01-"]) + rs(93, B64URL) + "AA")


@kind(
    "huggingface_token",
    [
        "HF_TOKEN={s}",
        "huggingface-cli login --token {s}",
        'login(token="{s}")',
        "Downloaded llama weights with hf token {s} (read scope)",
        "git clone https://{u}:{s}@huggingface.co/datasets/acme/support-tickets",
    ],
)
def _hf() -> dict[str, str]:
    return S("hf_" + rs(34, string.ascii_letters))


@kind("groq_api_key", ["GROQ_API_KEY={s}", "swapped to groq ({s}) for the fast path"])
def _groq() -> dict[str, str]:
    return S("gsk_" + rs(52))


@kind("openrouter_api_key", ["OPENROUTER_API_KEY={s}", 'api_key="{s}", base_url=OR_URL'])
def _openrouter() -> dict[str, str]:
    return S("sk-or-v1-" + rs(64, HEX))


@kind("replicate_api_token", ["REPLICATE_API_TOKEN={s}", "replicate token: {s}"])
def _replicate() -> dict[str, str]:
    return S("r8_" + rs(37))


# ---------------------------------------------------------------- chat, email, payments


@kind(
    "slack_bot_token",
    [
        "SLACK_BOT_TOKEN={s}",
        "curl -H 'Authorization: Bearer {s}' https://slack.com/api/auth.test",
        "slack: bot token {s} lacks chat:write.public",
    ],
)
def _xoxb() -> dict[str, str]:
    pre = R.choice(["xoxb-", "xoxb-", "xoxp-"])
    return S(pre + digits(12) + "-" + digits(13) + "-" + rs(24))


@kind(
    "slack_app_token",
    [
        "SLACK_APP_TOKEN={s}",
        "socket mode needs the app-level token: {s}",
        'app = App(token=os.environ["SLACK_BOT_TOKEN"]); SocketModeHandler(app, "{s}").start()',
        "  appToken: {s}",
    ],
)
def _xapp() -> dict[str, str]:
    return S("xapp-1-A0" + rs(9, UPPER_ALNUM) + "-" + digits(13) + "-" + rs(64, HEX))


@kind(
    "slack_webhook_url",
    [
        "SLACK_WEBHOOK_URL={s}",
        "curl -X POST -H 'Content-type: application/json' --data '{{\"text\":\"deploy ok\"}}' {s}",
        "alerts go to #ops via {s}",
        '  webhook_url: "{s}"',
    ],
)
def _slack_hook() -> dict[str, str]:
    return S(
        "https://hooks.slack.com/services/T0"
        + rs(8, UPPER_ALNUM)
        + "/B0"
        + rs(8, UPPER_ALNUM)
        + "/"
        + rs(24)
    )


@kind(
    "discord_bot_token",
    [
        "DISCORD_TOKEN={s}",
        "client.run('{s}')",
        "bot token {s} got reset by discord after it leaked in the gist",
    ],
)
def _discord_bot() -> dict[str, str]:
    snowflake = str(R.randint(10**17, 10**18 + 10**17)).encode()
    first = b64s(snowflake)
    return S(f"{first}.{rs(6, B64URL)}.{rs(R.choice([27, 38]), B64URL)}")


@kind(
    "discord_webhook_url",
    [
        "DISCORD_WEBHOOK={s}",
        "notify step posts to {s}",
    ],
)
def _discord_hook() -> dict[str, str]:
    host = R.choice(["discord.com", "discordapp.com"])
    return S(f"https://{host}/api/webhooks/{digits(19)}/{rs(68, B64URL)}")


@kind(
    "telegram_bot_token",
    [
        "TELEGRAM_BOT_TOKEN={s}",
        "curl https://api.telegram.org/bot{s}/getUpdates",
        "BotFather gave me {s} for @acme_alerts_bot",
        'bot = telebot.TeleBot("{s}")',
    ],
)
def _telegram() -> dict[str, str]:
    return S(digits(R.choice([9, 10])) + ":AA" + rs(33, B64URL))


@kind("teams_webhook_url", ["TEAMS_WEBHOOK={s}"])
def _teams() -> dict[str, str]:
    return S(
        f"https://acme.webhook.office.com/webhookb2/{uid()}@{uid()}/IncomingWebhook/"
        f"{rs(32, HEX)}/{uid()}"
    )


@kind(
    "sendgrid_api_key",
    [
        "SENDGRID_API_KEY={s}",
        "sg = SendGridAPIClient('{s}')",
        "emails stopped: sendgrid key {s} was revoked by their abuse team",
        "  smtp_password: {s}",
    ],
)
def _sendgrid() -> dict[str, str]:
    return S("SG." + rs(22, B64URL) + "." + rs(43, B64URL))


@kind(
    "mailgun_api_key",
    [
        "MAILGUN_API_KEY={s}",
        "curl -s --user 'api:{s}' https://api.mailgun.net/v3/mg.acme.io/messages",
    ],
)
def _mailgun() -> dict[str, str]:
    if R.random() < 0.6:
        return S("key-" + rs(32, HEX))
    return S(rs(32, HEX) + "-" + rs(8, HEX) + "-" + rs(8, HEX))


@kind(
    "mailchimp_api_key",
    [
        "MAILCHIMP_API_KEY={s}",
        "newsletter sync uses mailchimp key {s}",
    ],
)
def _mailchimp() -> dict[str, str]:
    return S(rs(32, HEX) + "-us" + str(R.randint(1, 21)))


@kind("brevo_api_key", ["BREVO_API_KEY={s}", "api-key: {s}"])
def _brevo() -> dict[str, str]:
    return S("xkeysib-" + rs(64, HEX) + "-" + rs(16))


@kind(
    "twilio",
    [
        "TWILIO_ACCOUNT_SID=AC{sid}\nTWILIO_AUTH_TOKEN={s}",
        "client = Client('AC{sid}', '{s}')",
        "twilio api key {s} / secret {sec}",
        "curl -u AC{sid}:{s} https://api.twilio.com/2010-04-01/Accounts.json",
    ],
)
def _twilio() -> dict[str, str]:
    if R.random() < 0.35:
        return S("SK" + rs(32, HEX), sid=rs(32, HEX), sec=rs(32))
    return S(rs(32, HEX), sid=rs(32, HEX), sec=rs(32))


@kind(
    "stripe_secret_key",
    [
        "STRIPE_SECRET_KEY={s}",
        'stripe.api_key = "{s}"',
        "curl https://api.stripe.com/v1/charges -u {s}:",
        "refund script ran against live mode because I pasted {s} instead of the test key",
    ],
)
def _stripe() -> dict[str, str]:
    pre = R.choice(["sk_live_", "sk_test_", "rk_live_", "sk_live_"])
    return S(pre + rs(R.choice([24, 99])))


@kind(
    "stripe_webhook_secret",
    [
        "STRIPE_WEBHOOK_SECRET={s}",
        "stripe listen printed: Ready! Your webhook signing secret is {s} (^C to quit)",
        "endpoint_secret = '{s}'",
    ],
)
def _whsec() -> dict[str, str]:
    return S("whsec_" + rs(32))


@kind(
    "square_token",
    [
        "SQUARE_ACCESS_TOKEN={s}",
        "square sandbox token {s}",
    ],
)
def _square() -> dict[str, str]:
    r = R.random()
    if r < 0.4:
        return S("sq0atp-" + rs(22, B64URL))
    if r < 0.7:
        return S("sq0csp-" + rs(43, B64URL))
    return S("EAAA" + rs(60, B64URL))


@kind(
    "shopify_token",
    [
        "SHOPIFY_ACCESS_TOKEN={s}",
        "X-Shopify-Access-Token: {s}",
        "custom app admin token {s} (scopes read_orders,write_products)",
        "SHOPIFY_API_SECRET={s}",
    ],
)
def _shopify() -> dict[str, str]:
    return S(R.choice(["shpat_", "shpss_", "shpca_", "shppa_"]) + rs(32, HEX))


@kind("facebook_access_token", ["FB_PAGE_TOKEN={s}", "graph api call with access_token={s}"])
def _fb() -> dict[str, str]:
    return S("EAA" + rs(1, "BCGI") + rs(R.randint(150, 200)))


@kind("twitter_bearer_token", ["TWITTER_BEARER_TOKEN={s}"])
def _tw() -> dict[str, str]:
    return S("AAAAAAAAAAAAAAAAAAAAA" + rs(25) + "%3D" + rs(50))


# ---------------------------------------------------------------- SaaS / observability


@kind(
    "atlassian_api_token",
    [
        "JIRA_API_TOKEN={s}",
        "curl -u {u}@acme.io:{s} https://acme.atlassian.net/rest/api/3/myself",
        "confluence export script: token {s}",
    ],
)
def _atlassian() -> dict[str, str]:
    return S("ATATT3xFfGF0" + rs(170, B64URL) + "=" + rs(8, HEX).upper())


@kind(
    "datadog_api_key",
    [
        "DD_API_KEY={s}",
        "datadog-agent: api_key: {s}",
        "helm install datadog datadog/datadog --set datadog.apiKey={s}",
    ],
)
def _dd() -> dict[str, str]:
    return S(rs(32, HEX))


@kind("datadog_app_key", ["DD_APP_KEY={s}", "DD-APPLICATION-KEY: {s}"])
def _dd_app() -> dict[str, str]:
    return S(rs(40, HEX))


@kind(
    "new_relic_key",
    [
        "NEW_RELIC_LICENSE_KEY={s}",
        "newrelic.ini: license_key = {s}",
        "API-Key: {s}",
        "new relic user key {s}",
    ],
)
def _nr() -> dict[str, str]:
    r = R.random()
    if r < 0.5:
        return S("NRAK-" + rs(27, UPPER_ALNUM))
    return S("eu01xx" + rs(30, HEX) + "NRAL")


@kind(
    "sentry_dsn",
    [
        "SENTRY_DSN=https://{s}@o{org}.ingest.sentry.io/{proj}",
        'sentry_sdk.init(dsn="https://{s}@o{org}.ingest.us.sentry.io/{proj}")',
        "  dsn: https://{s}@sentry.acme.io/{proj}",
    ],
)
def _sentry() -> dict[str, str]:
    return S(rs(32, HEX), org=digits(6), proj=digits(7))


@kind("sentry_auth_token", ["SENTRY_AUTH_TOKEN={s}", "sentry-cli login --auth-token {s}"])
def _sentry_tok() -> dict[str, str]:
    if R.random() < 0.5:
        return S("sntryu_" + rs(64, HEX))
    payload = b64s(
        json.dumps(
            {
                "iat": R.randint(1.7e9, 1.8e9),
                "url": "https://sentry.io",
                "region_url": "https://us.sentry.io",
                "org": "acme",
            }
        ).encode()
    )
    return S("sntrys_" + payload + "_" + rs(43, B64URL))


@kind("grafana_token", ["GRAFANA_TOKEN={s}", "Authorization: Bearer {s}"])
def _grafana() -> dict[str, str]:
    return S("glsa_" + rs(32) + "_" + rs(8, HEX))


@kind(
    "linear_api_key",
    [
        "LINEAR_API_KEY={s}",
        "curl -H 'Authorization: {s}' https://api.linear.app/graphql",
        "linear key {s} belongs to the triage bot",
    ],
)
def _linear() -> dict[str, str]:
    return S("lin_api_" + rs(40))


@kind(
    "notion_token",
    [
        "NOTION_TOKEN={s}",
        'notion = Client(auth="{s}")',
        "shared the wiki page with the integration, token is {s}",
    ],
)
def _notion() -> dict[str, str]:
    if R.random() < 0.6:
        return S("secret_" + rs(43))
    return S("ntn_" + digits(11) + rs(35))


@kind("databricks_token", ["DATABRICKS_TOKEN={s}", "databricks configure --token  # pasted {s}"])
def _databricks() -> dict[str, str]:
    return S("dapi" + rs(32, HEX))


@kind("okta_api_token", ["Authorization: SSWS {s}", "OKTA_API_TOKEN={s}"])
def _okta() -> dict[str, str]:
    return S("00" + rs(40, B64URL))


# ---------------------------------------------------------------- generic formats


@kind(
    "jwt",
    [
        "Authorization: Bearer {s}",
        "SUPABASE_SERVICE_ROLE_KEY={s}",
        "copied the id_token from devtools: {s}",
        "curl -b 'session={s}' https://app.acme.io/api/me",
        "2024-06-02 14:01:22,118 DEBUG auth: verifying token={s}",
    ],
)
def _jwt() -> dict[str, str]:
    header = {"alg": R.choice(["HS256", "RS256", "ES256"]), "typ": "JWT"}
    payload = {
        "sub": uid(),
        "iat": R.randint(1_700_000_000, 1_760_000_000),
        "exp": R.randint(1_760_000_000, 1_800_000_000),
        "role": R.choice(["service_role", "admin", "user"]),
    }
    h = b64s(json.dumps(header, separators=(",", ":")).encode())
    p = b64s(json.dumps(payload, separators=(",", ":")).encode())
    return S(f"{h}.{p}.{b64s(R.randbytes(32 if header['alg'] == 'HS256' else 64))}")


def _pem_body(prefix: bytes, nbytes: int) -> str:
    text = base64.b64encode(prefix + R.randbytes(nbytes)).decode()
    return "\n".join(text[i : i + 64] for i in range(0, len(text), 64))


@kind(
    "pem_private_key",
    [
        "-----BEGIN RSA PRIVATE KEY-----\n{s}\n-----END RSA PRIVATE KEY-----",
        "deploy key for the mirror (added to ~/.ssh/id_ed25519 on the runner):\n"
        "-----BEGIN OPENSSH PRIVATE KEY-----\n{s}\n-----END OPENSSH PRIVATE KEY-----",
        "tls.key: |\n  -----BEGIN EC PRIVATE KEY-----\n  {s}\n  -----END EC PRIVATE KEY-----",
        "-----BEGIN PRIVATE KEY-----\n{s}\n-----END PRIVATE KEY-----\n",
    ],
)
def _pem() -> dict[str, str]:
    return S(_pem_body(b"\x30\x82\x04\xa4\x02\x01\x00\x02\x82\x01\x01\x00", 300))


@kind(
    "basic_auth_header",
    [
        "Authorization: Basic {s}",
        "curl -H 'Authorization: Basic {s}' https://registry.acme.io/v2/_catalog",
        'proxy log: GET /metrics 200 auth="Basic {s}"',
    ],
)
def _basic() -> dict[str, str]:
    return S(base64.b64encode(f"{R.choice(USERS)}:{human_password()}".encode()).decode())


@kind(
    "bearer_header",
    [
        "Authorization: Bearer {s}",
        'curl -H "Authorization: Bearer {s}" https://api.acme.io/v2/orders',
        'headers = {{"Authorization": "Bearer {s}"}}',
        "requests.get(url, headers={{'authorization': 'bearer {s}'}})",
    ],
)
def _bearer() -> dict[str, str]:
    return S(rs(R.choice([32, 40, 48]), ALNUM + "._-"))


@kind(
    "oauth_access_token_query",
    [
        "https://app.acme.io/oauth/callback?token_type=bearer&access_token={s}&expires_in=3600",
        "redirected to /cb#state=xyz&token_type=bearer&access_token={s}",
        'GET /api/v1/export?format=csv&access_token={s} HTTP/1.1" 200',
    ],
)
def _oauth_query() -> dict[str, str]:
    return S(rs(R.choice([40, 64]), ALNUM + "-._"))


@kind(
    "url_password",
    [
        "DATABASE_URL=postgres://{u}:{s}@{h}:{port}/{db}",
        'mongosh "mongodb+srv://{u}:{s}@cluster0.x1y2z.mongodb.net/{db}"',
        "REDIS_URL=redis://:{s}@{h}:6379/0",
        "amqp://{u}:{s}@{h}:5672/%2F refused the connection",
        "pip install --index-url https://{u}:{s}@pypi.acme.io/simple/ internal-lib",
    ],
)
def _url_pw() -> dict[str, str]:
    return S(
        R.choice([human_password(), random_password(20)])
        .replace("@", "A")
        .replace("/", "z")
        .replace("#", "H")
        .replace("?", "Q")
        .replace("%", "P")
    )


@kind(
    "url_password_with_hash",
    [
        "postgres://{u}:{s}@{h}/{db}",
        "DATABASE_URL=postgresql://{u}:{s}@{h}:5432/{db}?sslmode=require",
        "mysql://{u}:{s}@{h}:3306/{db} worked once I quoted it",
    ],
)
def _url_hash() -> dict[str, str]:
    w = R.choice(WORDS)
    return S(f"{w[:3]}#{w[3:]}{R.randint(10, 99)}" if R.random() < 0.5 else f"{rs(6)}#{rs(6)}!")


@kind(
    "db_password_assignment",
    [
        "DB_PASS={s}",
        'DB_PASSWORD="{s}"',
        "POSTGRES_PASSWORD={s}",
        "  - MYSQL_ROOT_PASSWORD={s}",
        "PGPASSWORD='{s}' psql -h {h} -U {u} {db}",
    ],
)
def _dbpass() -> dict[str, str]:
    return S(human_password())


@kind(
    "mysql_pwd_env",
    [
        "MYSQL_PWD={s} mysqldump -u {u} {db} > dump.sql",
        "export MYSQL_PWD='{s}'",
    ],
)
def _mysql_pwd() -> dict[str, str]:
    return S(human_password())


@kind(
    "passphrase_assignment",
    [
        "PASSPHRASE={s}",
        'GPG_PASSPHRASE="{s}"',
        "export BORG_PASSPHRASE='{s}'",
    ],
)
def _passphrase() -> dict[str, str]:
    return S(
        R.choice(
            [
                f"{R.choice(WORDS)} {R.choice(WORDS)} {R.choice(WORDS)} {R.randint(1, 99)}",
                human_password(),
            ]
        )
    )


@kind(
    "mysql_cli_password",
    [
        "mysql -u root -p{s} -h {h} {db}",
        "ran `mysql -h {h} -u {u} -p{s} -e 'show processlist'`",
        "mysqladmin -uroot -p{s} status",
    ],
)
def _mysql_cli() -> dict[str, str]:
    return S(human_password().replace(" ", "").replace("'", "").replace("&", "A"))


@kind(
    "curl_basic_credentials",
    [
        "curl -u {u}:{s} https://jenkins.acme.io/job/{svc}/build",
        "curl --user admin:{s} -X POST http://localhost:9200/_security/user/kibana",
        "wget --user={u} --password={s} https://repo.acme.io/artifacts/app.tar.gz",
    ],
)
def _curl_u() -> dict[str, str]:
    return S(human_password().replace(" ", "").replace("&", "A").replace("'", "x"))


@kind(
    "cli_password_flag",
    [
        "docker login registry.acme.io -u {u} -p {s}",
        "sshpass -p '{s}' ssh {u}@{h}",
        'psql "host={h} user={u} password={s} dbname={db}"',
        "redis-cli -h {h} -a {s} info",
    ],
)
def _cli_pw() -> dict[str, str]:
    return S(human_password().replace(" ", "").replace("'", "x"))


@kind(
    "yaml_password",
    [
        "database:\n  host: {h}\n  user: {u}\n  password: {s}",
        'spring:\n  datasource:\n    username: {u}\n    password: "{s}"',
        "  smtp:\n    password: '{s}'",
        "ldap_bind_password: {s}",
    ],
)
def _yaml_pw() -> dict[str, str]:
    return S(R.choice([human_password(), random_password(18)]).replace("'", "x").replace('"', "x"))


@kind(
    "json_password",
    [
        '{{"username": "{u}", "password": "{s}"}}',
        '  "adminPassword": "{s}",',
    ],
)
def _json_pw() -> dict[str, str]:
    return S(human_password().replace('"', "x"))


@kind(
    "env_secret_key",
    [
        "SECRET_KEY={s}",
        "DJANGO_SECRET_KEY='{s}'",
        "JWT_SECRET={s}",
        'SESSION_SECRET="{s}"',
        "app.config['SECRET_KEY'] = '{s}'",
    ],
)
def _secret_key() -> dict[str, str]:
    r = R.random()
    if r < 0.4:
        return S(rs(50, string.ascii_lowercase + string.digits + "!@#%^&*(-_=+)"))
    if r < 0.7:
        return S(rs(64, HEX))
    return S(b64(32))


@kind("rails_secret_key_base", ["SECRET_KEY_BASE={s}", "secret_key_base: {s}"])
def _rails() -> dict[str, str]:
    return S(rs(128, HEX))


@kind(
    "k8s_secret_data",
    [
        "apiVersion: v1\nkind: Secret\ndata:\n  password: {s}",
        "  DB_PASSWORD: {s}",
    ],
)
def _k8s() -> dict[str, str]:
    return S(base64.b64encode(human_password().encode()).decode())


@kind(
    "api_key_near_keyword",
    [
        "api key: {s}",
        "the api key for the staging geocoder is {s}",
        "apikey={s}",
        "X-API-Key: {s}",
        "vendor sent us the key {s} by email, stored it in 1password too",
    ],
)
def _api_kw() -> dict[str, str]:
    return S(rs(R.choice([24, 32, 40]), R.choice([LOWER_ALNUM, ALNUM, HEX])))


@kind(
    "password_in_prose",
    [
        "passwd is {s}",
        "the admin password is {s} until we wire up SSO",
        "login for the staging dashboard: {u} / {s}",
        "pw: {s}",
        "Reset the grafana admin pass to {s}",
    ],
)
def _pw_prose() -> dict[str, str]:
    return S(R.choice([random_password(14), human_password()]).replace(" ", ""))


@kind(
    "private_token_generic",
    [
        "client_secret={s}",
        "--client-secret {s}",
        '"clientSecret": "{s}"',
    ],
)
def _client_secret() -> dict[str, str]:
    return S(rs(R.choice([32, 40]), ALNUM + "-_~."))


# Held-out contexts, written after the prototype rules were frozen; run with --heldout.  Each
# entry: (kind, generator kind whose format is reused, template).
HELDOUT: list[tuple[str, str, str]] = [
    ("huggingface_token", "huggingface_token", "I rotated the HF token; the new one is {s}."),
    ("huggingface_token", "huggingface_token", "HUGGING_FACE_HUB_TOKEN: {s}"),
    ("npm_token", "npm_token", "npm whoami works with {s} but publish still wants an OTP"),
    ("npm_token", "npm_token", "      - run: npm ci\n        env:\n          NODE_AUTH_TOKEN: {s}"),
    ("gitlab_pat", "gitlab_pat", "GitLab PAT (read_api only): {s}"),
    (
        "gitlab_pat",
        "gitlab_pat",
        'curl --header "PRIVATE-TOKEN: {s}" https://gitlab.acme.io/api/v4/projects',
    ),
    ("slack_app_token", "slack_app_token", "Slack socket mode -> xapp = {s}"),
    (
        "slack_webhook_url",
        "slack_webhook_url",
        "pasted the webhook ({s}) into the Grafana contact point",
    ),  # noqa: E501
    ("sendgrid_api_key", "sendgrid_api_key", "SMTP relay: user 'apikey', password {s}"),
    ("digitalocean_token", "digitalocean_token", "DO token: {s}"),
    ("shopify_token", "shopify_token", "shopify admin api access token `{s}`"),
    ("telegram_bot_token", "telegram_bot_token", "telegram: {s}"),
    (
        "google_oauth_client_secret",
        "google_oauth_client_secret",
        'credentials.json -> "client_secret": "{s}", redirect http://localhost:8080/cb',
    ),
    ("stripe_webhook_secret", "stripe_webhook_secret", "stripe CLI: webhook secret {s}"),
    ("stripe_secret_key", "stripe_secret_key", "STRIPE_KEY={s}"),
    (
        "azure_storage_connection_string",
        "azure_storage_connection_string",
        "conn str for blob: DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey={s};",
    ),
    (
        "azure_service_bus_connection_string",
        "azure_service_bus_connection_string",
        "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey={s}",
    ),
    (
        "azure_sas_token",
        "azure_sas_token",
        "blob link (valid 7d): https://acmelogs.blob.core.windows.net/x/y.zip?sp=r&st=2024-05-01"
        "&se=2024-05-08&spr=https&sv=2022-11-02&sr=b&sig={s}",
    ),
    ("db_password_assignment", "db_password_assignment", "db password for staging is {s}"),
    ("db_password_assignment", "db_password_assignment", "    environment:\n      DB_PASS: {s}"),
    (
        "mysql_pwd_env",
        "mysql_pwd_env",
        "MYSQL_PWD is set to {s} in the cron env, that's why it works",
    ),  # noqa: E501
    (
        "passphrase_assignment",
        "passphrase_assignment",
        "PASSPHRASE={s} duplicity /srv s3://backups",
    ),
    ("mysql_cli_password", "mysql_cli_password", "mysql -uadmin -p{s} shop < fix.sql"),
    (
        "curl_basic_credentials",
        "curl_basic_credentials",
        "curl -u 'deploy:{s}' https://ci.acme.io/api/json",
    ),
    ("url_password_with_hash", "url_password_with_hash", "postgresql://app:{s}@db:5432/app"),
    (
        "oauth_access_token_query",
        "oauth_access_token_query",
        "127.0.0.1 - - GET /login/callback?token_type=bearer&access_token={s}&scope=read 302",
    ),
    ("aws_secret_in_prose", "aws_secret_in_prose", "aws: secret access key {s}"),
    (
        "aws_secret_in_prose",
        "aws_secret_in_prose",
        "and the secret is {s} -- don't paste it in slack",
    ),  # noqa: E501
    ("password_in_prose", "password_in_prose", "sudo password on the build box is {s}"),
    ("password_in_prose", "password_in_prose", "root pw = {s}"),
    ("password_in_prose", "password_in_prose", "wifi pass for the office: {s}"),
    ("api_key_near_keyword", "api_key_near_keyword", "geocoder key -> {s}"),
    ("api_key_near_keyword", "api_key_near_keyword", "The key for mapbox was {s} (free tier)"),
    ("env_secret_key", "env_secret_key", "SECRET_KEY = '{s}'  # settings/local.py"),
    ("github_classic_pat", "github_classic_pat", "Authorization: token {s}"),
    (
        "github_fine_grained_pat",
        "github_fine_grained_pat",
        "https://x-access-token:{s}@github.com/acme/infra",
    ),
    ("json_password", "json_password", '{{"user":"{u}","password":"{s}","host":"{h}"}}'),
    ("ruby_password", "json_password", "  password => '{s}',"),
    ("netrc_password", "cli_password_flag", "machine api.heroku.com login me@acme.io password {s}"),
    ("pgpass_line", "db_password_assignment", "~/.pgpass: db.internal:5432:app:app:{s}"),
    ("git_credentials_url", "url_password", "~/.git-credentials has https://{u}:{s}@git.acme.io"),
    (
        "docker_config_auth",
        "basic_auth_header",
        '"auths": {{"registry.acme.io": {{"auth": "{s}"}}}}',
    ),  # noqa: E501
    ("kubeconfig_token", "bearer_header", "users:\n- name: ci\n  user:\n    token: {s}"),
    ("anthropic_api_key", "anthropic_api_key", "claude key (workspace: evals) {s}"),
    ("openai_api_key", "openai_api_key", "openai: {s}"),
    ("jwt", "jwt", "the refresh cookie was {s}; decoding it shows role=admin"),
    (
        "pem_private_key",
        "pem_private_key",
        "key.pem:\n-----BEGIN ENCRYPTED PRIVATE KEY-----\n{s}\n-----END ENCRYPTED PRIVATE KEY-----",
    ),
    ("twilio", "twilio", "twilio auth token {s}"),
    ("datadog_api_key", "datadog_api_key", "datadog key {s}"),
    (
        "sentry_dsn",
        "sentry_dsn",
        "Sentry.init({{ dsn: 'https://{s}@o{org}.ingest.sentry.io/{proj}' }})",
    ),  # noqa: E501
    ("vault_token", "hashicorp_vault_token", "VAULT_TOKEN is {s}"),
    ("doppler_token", "doppler_token", "doppler run --token {s} -- npm start"),
    ("linear_api_key", "linear_api_key", "linear: {s}"),
    ("notion_token", "notion_token", "notion integration secret -> {s}"),
    ("discord_bot_token", "discord_bot_token", "bot token: {s}"),
    ("discord_webhook_url", "discord_webhook_url", "webhook {s}"),
    ("heroku_api_key", "heroku_api_key", "heroku token {s}"),
    ("datadog_app_key", "datadog_app_key", "dd app key: {s}"),
    ("mailgun_api_key", "mailgun_api_key", "mailgun private key {s}"),
    ("docker_hub_pat", "docker_hub_pat", "docker hub PAT {s} (read/write)"),
    ("pypi_token", "pypi_token", "UV_PUBLISH_TOKEN={s}"),
    ("cloudflare_api_token", "cloudflare_api_token", "cf api token (zone:edit) {s}"),
    (
        "bearer_header",
        "bearer_header",
        "fetch(url, {{ headers: {{ Authorization: `Bearer {s}` }} }})",
    ),  # noqa: E501
    ("yaml_password", "yaml_password", "redis:\n  auth:\n    password: {s}"),
    (
        "k8s_secret_data",
        "k8s_secret_data",
        "kubectl get secret db -o yaml | grep pass\n  password: {s}",
    ),  # noqa: E501
]


# Second held-out set, written after the prototype was frozen a second time and measured once.
# Some formats here have no rule in the prototype on purpose (unseen providers).
def _heldout2_values() -> dict[str, Callable[[], str]]:
    b32 = "abcdefghijklmnopqrstuvwxyz234567"
    return {
        "azure_devops_pat": lambda: rs(52, b32),
        "artifactory_api_key": lambda: "AKCp" + rs(69),
        "mapbox_secret_token": lambda: (
            "sk.eyJ1IjoiYWNtZSIsImEiOiJ" + rs(20) + "In0." + rs(22, B64URL)
        ),
        "netlify_token": lambda: "nfp_" + rs(36),
        "supabase_access_token": lambda: "sbp_" + rs(40, HEX),
        "supabase_secret_key": lambda: "sb_secret_" + rs(31, B64URL),
        "planetscale_password": lambda: "pscale_pw_" + rs(43, B64URL),
        "render_api_key": lambda: "rnd_" + rs(32),
        "algolia_admin_key": lambda: rs(32, HEX),
        "vercel_token": lambda: rs(24),
        "auth0_client_secret": lambda: rs(64, B64URL),
        "password": lambda: human_password().replace("'", "x").replace('"', "x"),
        "github_classic_pat": lambda: "ghp_" + rs(36),
        "slack_user_token": lambda: (
            "xoxp-" + digits(12) + "-" + digits(12) + "-" + digits(13) + "-" + rs(32, HEX)
        ),
    }


HELDOUT2: list[tuple[str, str, str]] = [
    ("azure_devops_pat", "azure_devops_pat", "AZURE_DEVOPS_EXT_PAT={s}"),
    ("azure_devops_pat", "azure_devops_pat", "ado pat for the pipeline agent: {s}"),
    ("artifactory_api_key", "artifactory_api_key", "X-JFrog-Art-Api: {s}"),
    ("mapbox_secret_token", "mapbox_secret_token", "MAPBOX_DOWNLOADS_TOKEN={s}"),
    ("netlify_token", "netlify_token", "netlify deploy --prod --auth {s}"),
    ("supabase_access_token", "supabase_access_token", "supabase login --token {s}"),
    ("supabase_secret_key", "supabase_secret_key", "createClient(url, '{s}')"),
    (
        "planetscale_password",
        "planetscale_password",
        "mysql://8x2k1q0z:{s}@aws.connect.psdb.cloud/app?sslaccept=strict",
    ),
    ("render_api_key", "render_api_key", "render api key {s}"),
    ("algolia_admin_key", "algolia_admin_key", "ALGOLIA_ADMIN_KEY={s}"),
    ("vercel_token", "vercel_token", "vercel --token {s} --prod"),
    ("auth0_client_secret", "auth0_client_secret", "export AUTH0_CLIENT_SECRET={s}"),
    (
        "git_remote_token",
        "github_classic_pat",
        "$ git remote -v\norigin  https://{s}@github.com/acme/x (fetch)",
    ),
    ("slack_user_token", "slack_user_token", "user token (for search:read) {s}"),
    (
        "python_connect_password",
        "password",
        "conn = psycopg2.connect(host='{h}', user='{u}', password='{s}', dbname='{db}')",
    ),
    ("jdbc_password", "password", "jdbc:mysql://{h}:3306/{db}?user={u}&password={s}&useSSL=false"),
    ("smtp_password", "password", "smtp_pass = '{s}'"),
    ("tfvars_password", "password", 'db_password = "{s}"'),
    ("java_properties_password", "password", "spring.datasource.password={s}"),
    ("ssh_keygen_passphrase", "password", "ssh-keygen -t ed25519 -N '{s}' -f deploy_key"),
    (
        "openssl_passout",
        "password",
        "openssl pkcs12 -export -in c.pem -inkey k.pem -passout pass:{s}",
    ),
    ("htpasswd_cli", "password", "htpasswd -b -c .htpasswd admin {s}"),
    ("sql_create_user", "password", "CREATE USER {u} WITH PASSWORD '{s}';"),
    ("sql_identified_by", "password", "ALTER USER 'app'@'%' IDENTIFIED BY '{s}';"),
    ("rabbitmq_add_user", "password", "rabbitmqctl add_user app '{s}'"),
    ("keycloak_admin", "password", "KEYCLOAK_ADMIN_PASSWORD={s}"),
    (
        "mongodump_uri",
        "password",
        "mongodump --uri 'mongodb://admin:{s}@{h}:27017/?authSource=admin'",
    ),
    ("prose_password", "password", "Note: the new VPN password ({u}) is {s}"),
    ("prose_password", "password", "changed the pg password to {s} on prod, old one is revoked"),
    (
        "prose_token",
        "vercel_token",
        "Deployed with my personal token {s}; will swap for a team token",
    ),
]


def build_heldout2() -> list[dict[str, str]]:
    values = _heldout2_values()
    rows: list[dict[str, str]] = []
    for name, fmt, tpl in HELDOUT2:
        for _ in range(2):
            fields = common()
            fields["s"] = values[fmt]()
            text = tpl.format(**fields)
            if R.random() < 0.4:
                text = R.choice(WRAPPERS).format(line=text, **common())
            assert fields["s"] in text, (name, tpl)
            rows.append({"kind": name, "text": text, "secret": fields["s"]})
    return rows


WRAPPERS = [
    "fix(deploy): point {svc} at the new cluster\n\n{line}\n\nRefs: OPS-{n}",
    "WIP debugging the {svc} sync job\n\n{line}",
    "## Session notes\n- reproduced the 401 on /api/export\n- {line}\n- next: move this to the "
    "secret store and rotate",
    "Tried this:\n```\n{line}\n```\nstill fails with 403 Forbidden.",
    "{line}\n\nThat fixed the auth error; the earlier run (commit {sha}) had the old value.",
    "Summary: got the {svc} integration working locally. Config used:\n    {line}",
]


def build() -> list[dict[str, str]]:
    rows: list[dict[str, str]] = []
    for name, (gen, templates) in KINDS.items():
        count = max(3, len(templates))
        for i in range(count):
            tpl = templates[i % len(templates)]
            fields = common()
            fields.update(gen())
            text = tpl.format(**fields)
            if R.random() < 0.4:
                text = R.choice(WRAPPERS).format(line=text, **common())
            secret = fields["s"]
            assert secret in text, (name, tpl)
            rows.append({"kind": name, "text": text, "secret": secret})
    return rows


def build_heldout() -> list[dict[str, str]]:
    rows: list[dict[str, str]] = []
    for name, fmt, tpl in HELDOUT:
        gen = KINDS[fmt][0]
        for _ in range(2):
            fields = common()
            fields.update(gen())
            if fmt == "pem_private_key":
                fields["s"] = _pem_body(b"\x30\x82\x05\x06\x30\x40\x06\x09", 900)
            if fmt == "basic_auth_header":
                fields["s"] = base64.b64encode(
                    f"{R.choice(USERS)}:{random_password(24)}".encode()
                ).decode()
            text = tpl.format(**fields)
            if R.random() < 0.4:
                text = R.choice(WRAPPERS).format(line=text, **common())
            assert fields["s"] in text, (name, tpl)
            rows.append({"kind": name, "text": text, "secret": fields["s"]})
    return rows


def main() -> None:
    global R
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--heldout",
        action="store_true",
        help="write corpus_heldout.jsonl (contexts unseen while writing rules)",
    )
    parser.add_argument(
        "--heldout2", action="store_true", help="write corpus_heldout2.jsonl (second held-out set)"
    )
    args = parser.parse_args()
    if args.heldout2:
        R = random.Random(4242)
        rows = build_heldout2()
        args.out = args.out or Path(__file__).with_name("corpus_heldout2.jsonl")
    elif args.heldout:
        R = random.Random(777)
        rows = build_heldout()
        args.out = args.out or Path(__file__).with_name("corpus_heldout.jsonl")
    else:
        rows = build()
        args.out = args.out or Path(__file__).with_name("corpus.jsonl")
    with args.out.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} samples of {len({r['kind'] for r in rows})} kinds to {args.out}")


if __name__ == "__main__":
    main()
