"""Generate bench/secrets/corpus_heldout4.jsonl: FAKE credentials written from the transport's
side rather than the provider's: where a secret travels (an .env line, a CLI flag, an HTTP
header, a JSON / YAML / TOML / INI / XML file, a connection URL, a webhook URL, a cookie, a
private-key block) and how it is disguised on the way (base64-wrapped, split over lines or
concatenated, URL-encoded, written into a file name), plus provider formats that sets 1-3 do
not have.

Held-out 4 was written before any rule was changed for it, and it leaves out the kinds of sets
1-3 and the kinds a red team reported missed (the dev cases of tests/scrub: az login -p,
52-character Azure DevOps PATs, PuTTY keys, Dropbox sl., Twitch oauth:, Cohere, GCP
private_key_id, a base64-wrapped Stripe key, an AWS key split over two lines, hf_ with digits).
Rules are never tuned on it: its figure is reported before and after a change to the rules.

Every record: ``kind``; ``text``; ``secret`` (the value that must not survive); ``shape``:
``provider`` (recognisable by its own prefix or shape, so also measured as a committed file's
name) or ``context``; ``parts`` (optional): fragments of a value split in the text, each of which
must be gone (a split value is only redacted when no fragment of it is left).

    python bench/secrets/make_heldout4.py     # writes corpus_heldout4.jsonl next to this file
"""

from __future__ import annotations

import base64
import json
import random
import string
import urllib.parse
import uuid
from pathlib import Path

R = random.Random(4044)

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
DIGITS = string.digits
ALNUM = string.ascii_letters + DIGITS
LOWER_ALNUM = LOWER + DIGITS
UPPER_ALNUM = UPPER + DIGITS
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def rs(n: int, alphabet: str = ALNUM) -> str:
    return "".join(R.choice(alphabet) for _ in range(n))


def mixed(n: int, alphabet: str = ALNUM) -> str:
    while True:
        value = rs(n, alphabet)
        wants = [str.isdigit, str.isupper, str.islower]
        if all(any(f(c) for c in value) for f in wants if any(f(c) for c in alphabet)):
            return value


def hexs(n: int) -> str:
    while True:
        value = rs(n, HEX)
        if any(c.isalpha() for c in value) and any(c.isdigit() for c in value):
            return value


def uid() -> str:
    return str(uuid.UUID(bytes=R.randbytes(16), version=4))


def b64(nbytes: int, *, url: bool = False, pad: bool = True) -> str:
    raw = R.randbytes(nbytes)
    out = (base64.urlsafe_b64encode if url else base64.b64encode)(raw).decode()
    return out if pad else out.rstrip("=")


def enc(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def jwt(payload: dict[str, object], alg: str = "HS256") -> str:
    def part(obj: dict[str, object]) -> str:
        raw = json.dumps(obj, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    sig = b64(32 if alg.startswith("HS") else 256, url=True, pad=False)
    return f"{part({'alg': alg, 'typ': 'JWT'})}.{part(payload)}.{sig}"


WORDS = ["orchid", "basalt", "tundra", "quartz", "falcon", "juniper", "cobalt", "maple", "delta"]


def password() -> str:
    style = R.randrange(5)
    if style == 0:
        return R.choice(WORDS).capitalize() + str(R.randint(100, 9999)) + R.choice("!#$%&*+?")
    if style == 1:
        return rs(R.randint(14, 22), ALNUM + "!#%^*-_+=")
    if style == 2:
        return f"{R.choice(WORDS)}.{R.choice(WORDS)}.{R.choice(WORDS)}{R.randint(1, 9)}"
    if style == 3:
        return mixed(R.randint(16, 28))
    return R.choice(WORDS) + R.choice(WORDS) + str(R.randint(10, 99))


def pem_body(lines: int = 6) -> str:
    return "\n".join(b64(48) for _ in range(lines))


Row = dict[str, object]
ROWS: list[Row] = []
P, C = "provider", "context"


def add(kind: str, shape: str, text: str, secret: str, parts: list[str] | None = None) -> None:
    assert all(row["kind"] != kind for row in ROWS), kind
    if parts is None:
        assert secret in text, kind
    else:
        assert all(p in text for p in parts), kind
    row: Row = {"kind": kind, "text": text, "secret": secret, "shape": shape}
    if parts is not None:
        row["parts"] = parts
    ROWS.append(row)


def one(kind: str, shape: str, secret: str, template: str) -> None:
    add(kind, shape, template.format(s=secret), secret)


# ------------------------------------------------------------- provider formats new to set 4
one("yandex_api_key", P, "AQVN" + mixed(36, B64URL), "yc config set token {s}")
one("yandex_iam_token", P, "t1.9euelZ" + mixed(150, B64URL), "YC_IAM_TOKEN is {s} (12h)")
one("yandex_static_key_id", P, "YCAJE" + mixed(20, B64URL), "aws_access_key_id = {s}  # yandex s3")
one("yandex_static_secret", P, "YCM" + mixed(37, B64URL), "the yandex storage secret {s} works")
one("exoscale_api_key", P, "EXO" + hexs(24), "exo config add --key {s}")
one(
    "aws_bedrock_api_key",
    P,
    "ABSK" + enc("BedrockAPIKey-" + rs(8) + "-at-" + rs(12)) + b64(60, pad=False),
    "AWS_BEARER_TOKEN_BEDROCK={s} python invoke.py",
)
one("nostr_nsec", P, "nsec1" + rs(58, BECH32), "my relay bot key (nsec): {s}")
one("voyage_api_key", P, "pa-" + mixed(43, B64URL), "VOYAGE_API_KEY={s} make embed")
one("tavily_api_key", P, "tvly-" + mixed(32), "tavily = TavilyClient(api_key='{s}')")
one("firecrawl_key", P, "fc-" + hexs(32), "firecrawl crawl https://docs.acme.io --api-key {s}")
one("browserbase_key", P, "bb_live_" + mixed(27, B64URL), "BROWSERBASE_API_KEY: {s}")
one("anyscale_key", P, "esecret_" + mixed(28, LOWER_ALNUM), "anyscale endpoints key {s} in ci")
one(
    "modal_token_secret",
    P,
    "as-" + mixed(22),
    "modal token set --token-id ak-3kd9Ls0dkQpw1mZ9aLq2ZP --token-secret {s}",
)
one("deno_deploy_token", P, "ddp_" + mixed(36), "deployctl deploy --token={s} main.ts")
one("axiom_token", P, "xaat-" + uid(), "AXIOM_TOKEN={s} vector --config vector.toml")
one("coralogix_key", P, "cxtp_" + mixed(30), "Coralogix send-your-data key {s} for the eu2 region")
one("checkout_secret_key", P, "sk_sbox_" + rs(26, LOWER_ALNUM), "Checkout.com sandbox secret {s}")
one(
    "paddle_api_key",
    P,
    "pdl_live_apikey_" + rs(26, LOWER_ALNUM) + "_" + mixed(22) + "_" + rs(3, ALNUM),
    "PADDLE_API_KEY={s}",
)
one("resend_api_key", P, "re_" + mixed(8) + "_" + mixed(24), 'resend.api_key = "{s}"')
one("mailersend_token", P, "mlsn." + hexs(64), "MailerSend token {s} (domain acme.io)")
one("onesignal_rest_key", P, "os_v2_app_" + rs(113, LOWER_ALNUM), "OneSignal REST API key {s}")
one("stytch_secret", P, "secret-live-" + mixed(36, B64URL), "STYTCH_SECRET={s}")
one("ory_pat", P, "ory_pat_" + mixed(32), "ory auth with {s} against the prod project")
one(
    "woocommerce_consumer_secret",
    P,
    "cs_" + hexs(40),
    "WC REST: consumer_key ck_" + hexs(40) + " consumer_secret {s}",
)
one("woocommerce_consumer_key", P, "ck_" + hexs(40), "woocommerce key for the shop sync is {s}")
one("quicknode_url", P, hexs(40), "RPC=https://wild-frosty-pine.solana-mainnet.quiknode.pro/{s}/")
one("loggly_token", C, uid(), "curl -d @event.json https://logs-01.loggly.com/inputs/{s}/tag/http/")
one("gemfury_push_token", C, mixed(20), "git remote add fury https://{s}@git.fury.io/acme/")
one(
    "ifttt_webhook_key",
    C,
    mixed(22, B64URL),
    "curl -X POST https://maker.ifttt.com/trigger/deploy_done/with/key/{s}",
)
one("feishu_webhook", C, uid(), "LARK_HOOK=https://open.feishu.cn/open-apis/bot/v2/hook/{s}")
one("rocketchat_webhook", C, mixed(48), "notify: https://chat.acme.io/hooks/" + mixed(17) + "/{s}")
one(
    "zapier_webhook",
    C,
    f"{R.randint(1000000, 9999999)}/{rs(7, LOWER_ALNUM)}",
    "The zap fires on POST https://hooks.zapier.com/hooks/catch/{s}/",
)
one(
    "google_chat_webhook_token",
    C,
    rs(43, B64URL),
    "GCHAT=https://chat.googleapis.com/v1/spaces/AAAA"
    + rs(7)
    + "/messages?key=AIza"
    + rs(35, B64URL)
    + "&token={s}",
)
one("wecom_webhook", C, uid(), "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key={s}")
one("dingtalk_webhook", C, hexs(64), "https://oapi.dingtalk.com/robot/send?access_token={s}")
one(
    "telegram_webhook_secret",
    C,
    mixed(32, B64URL),
    "setWebhook url=https://bot.acme.io/tg secret_token={s}",
)

# ------------------------------------------------------------- .env lines
one("env_spaces_around_equals", C, password(), "DB_PASSWORD = {s}")
one("env_export_double_quoted", C, mixed(40, B64URL), 'export SESSION_SIGNING_KEY="{s}"')
one("env_salt", C, rs(64, ALNUM + "!@#$%^*()-_[]{}<>~+=,.;:/?|"), "AUTH_SALT='{s}'")
one("env_hmac_key", C, hexs(64), "WEBHOOK_HMAC_KEY={s}")
one("env_private_key_inline", C, b64(32), "JWT_PRIVATE={s}")
one("env_stripe_sk_short_name", C, "sk_live_" + mixed(99), "STRIPE_SK={s}")
one(
    "env_database_url",
    C,
    password(),
    "DATABASE_URL=postgresql://app_rw:{s}@pg-main.acme.internal:5432/app",
)
one("env_cookie_secret", C, mixed(48), "COOKIE_SECRET={s} node server.js")
one("env_encryption_key_b64", C, b64(32), "FIELD_ENCRYPTION_KEY=base64:{s}")
one("env_master_key_word", C, R.choice(WORDS) + R.choice(WORDS), "MASTER_KEY={s}")
one("env_auth_value", C, "user:" + password(), "NEO_AUTH_CREDS={s}")
one("env_neo4j_auth", C, password(), "NEO4J_AUTH=neo4j/{s}")
one("env_lowercase_name", C, mixed(30), "api_secret={s}")
one("env_dotted_name", C, password(), "spring.mail.password={s}")
one("env_windows_set", C, password(), 'set "SMTP_PASS={s}" && mailer.exe')
one("env_powershell", C, mixed(40), '$env:OPENROUTER_KEY = "{s}"')
one("env_fish_set", C, mixed(36), "set -gx REGISTRY_TOKEN {s}")
one("env_docker_run", C, password(), "docker run -e POSTGRES_PASSWORD={s} -d postgres:16")
one(
    "env_compose_list",
    C,
    password(),
    "    environment:\n      - MARIADB_ROOT_PASSWORD={s}\n      - MARIADB_DATABASE=app",
)
one("env_github_actions", C, password(), "      env:\n        SONAR_LOGIN_PASSWORD: {s}")
one("env_systemd", C, mixed(32), 'Environment="GRAFANA_CLOUD_KEY={s}"')
one("env_dockerfile_arg", C, mixed(36), "ARG NPM_AUTH={s}")
one("env_makefile", C, mixed(32), "PUBLISH_TOKEN ?= {s}")

# ------------------------------------------------------------- CLI flags and commands
one("flag_db_password", C, password(), "./bin/migrate --db-password={s} --db-host=pg")
one("flag_admin_pass", C, password(), "ghost-cli setup --admin-pass {s}")
one("flag_secret_key", C, mixed(40, B64), "s3cmd --access_key=AK1 --secret_key={s} ls")
one(
    "flag_storepass_space",
    C,
    password(),
    "jarsigner -keystore rel.jks -storepass {s} app.apk release",
)
one("flag_sasl_password", C, password(), "kcat -b kafka:9093 -X sasl.password={s} -L")
one("flag_bind_password", C, password(), "ldapmodify --bindPassword {s} -f change.ldif")
one("flag_passphrase_gpg", C, password(), "gpg --batch --passphrase {s} -d backup.tar.gpg")
one("flag_zip_P", C, password(), "zip -r -P {s} dump.zip dump/")
one("flag_7z_p", C, password(), "7z a -p{s} -mhe=on vault.7z ./secrets")
one("flag_cqlsh_p", C, password(), "cqlsh cass-01 -u cassandra -p {s}")
one(
    "flag_mongosh_password",
    C,
    password(),
    "mongosh mongodb://db:27017/admin --username root --password {s}",
)
one("flag_influx_token", C, rs(86, B64URL) + "==", "influx query -t {s} 'from(bucket:\"m\")'")
one("flag_sqlplus", C, password(), "sqlplus scott/{s}@//ora-01:1521/ORCLPDB1")
one(
    "flag_wget_password", C, password(), "wget --user=dl --password={s} https://files.acme.io/x.tgz"
)
one("flag_curl_oauth2", C, mixed(40), "curl --oauth2-bearer {s} https://api.acme.io/me")
one(
    "flag_git_extraheader",
    C,
    mixed(44),
    'git -c http.extraHeader="Authorization: Basic {s}" clone https://git.acme.io/x',
)
one(
    "flag_kubectl_literal",
    C,
    password(),
    "kubectl create secret generic db --from-literal=DB_PASS={s}",
)
one(
    "flag_helm_set",
    C,
    password(),
    "helm upgrade app ./chart --set postgresql.auth.postgresPassword={s}",
)
one("flag_terraform_var", C, password(), "terraform apply -var 'admin_password={s}'")
one(
    "flag_password_stdin", C, password(), "echo '{s}' | docker login -u ci --password-stdin ghcr.io"
)
one("flag_sudo_S", C, password(), "echo {s} | sudo -S systemctl restart app")
one(
    "flag_expect_send",
    C,
    password(),
    'expect -c \'spawn ssh ops@bastion; expect "password:"; send "{s}\\r"; interact\'',
)
one(
    "flag_aws_configure",
    C,
    mixed(40, B64),
    "aws configure set aws_secret_access_key {s} --profile prod",
)
one("flag_vault_write", C, password(), "vault kv put secret/app db_pass={s}")
one("flag_nmcli", C, password(), "nmcli dev wifi connect acme-guest password {s}")
one("flag_smbclient", C, password(), "smbclient //nas/backup -U backup%{s}")
one("flag_rclone_obscure", C, password(), "rclone config create s3x s3 secret_access_key {s}")
one(
    "flag_psql_conninfo",
    C,
    password(),
    'psql "postgresql://report@db/app?password={s}&sslmode=require"',
)
one("flag_ftp_user", C, password(), "lftp -u deploy,{s} ftp.acme.io")
one("flag_openvpn_auth", C, password(), "printf 'vpnuser\\n{s}\\n' > /etc/openvpn/auth.txt")

# ------------------------------------------------------------- HTTP headers and cookies
one(
    "header_token_scheme",
    C,
    hexs(40),
    "curl -H 'Authorization: Token {s}' https://api.deepgram.com/v1/listen",
)
one("header_bot_scheme", C, mixed(59, B64URL), "Authorization: Bot {s}")
one("header_apim", C, hexs(32), "Ocp-Apim-Subscription-Key: {s}")
one("header_rapidapi", C, mixed(50), "'X-RapidAPI-Key': '{s}',")
one("header_goog_api", C, mixed(39, B64URL), '-H "X-Goog-Api-Key: {s}"')
one("header_x_auth_token", C, mixed(31), "X-Auth-Token: {s}")
one("header_x_access_token", C, mixed(40), "x-access-token: {s}")
one("header_api_token", C, mixed(32), "api-token: {s}")
one("header_apikey_supabase", C, mixed(40), "apikey: {s}")
one(
    "header_proxy_authorization",
    C,
    enc("proxyuser:" + password()),
    "Proxy-Authorization: Basic {s}",
)
one("header_amz_security_token", C, b64(200), "x-amz-security-token: {s}")
one("header_cookie_session", C, mixed(40), "Cookie: sessionid={s}; csrftoken=abc")
one(
    "header_set_cookie",
    C,
    mixed(48, B64URL),
    "Set-Cookie: __Host-auth={s}; Path=/; Secure; HttpOnly",
)
one("header_lowercase_bearer", C, mixed(32), "authorization: bearer {s}")
one("header_httpie", C, mixed(36), "http POST api.acme.io/jobs Authorization:'Token {s}'")
one("header_fetch_object", C, mixed(40), "fetch(url, {{ headers: {{ 'X-Api-Token': '{s}' }} }})")
one("header_requests_dict", C, mixed(40), 'requests.get(u, headers={{"X-Secret": "{s}"}})')
one(
    "header_aws_sigv4_key",
    P,
    "AKIA" + rs(16, UPPER_ALNUM),
    "Authorization: AWS4-HMAC-SHA256 Credential={s}/20261201/us-east-1/s3/aws4_request, "
    "SignedHeaders=host, Signature=" + hexs(64),
)
one(
    "header_digest_response",
    C,
    password(),
    'curl --digest -u "admin:{s}" http://cam-04/snapshot.jpg',
)

# ------------------------------------------------------------- JSON / YAML / TOML / INI / XML
one("json_nested_secret", C, mixed(40), '{{"stripe": {{"webhook": {{"signing": "{s}"}}}}}}')
one(
    "json_credentials_object",
    C,
    password(),
    '{{"credentials": {{"username": "svc", "password": "{s}"}}}}',
)
one(
    "json_routing_key",
    C,
    "R0" + rs(30, LOWER_ALNUM),
    '{{"routing_key": "{s}", "event_action": "trigger"}}',
)
one(
    "json_escaped_pem",
    C,
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + b64(300)[:200],
    '{{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n{s}\\n'
    '-----END PRIVATE KEY-----\\n"}}',
)
one(
    "json_jwk_d",
    C,
    b64(32, url=True, pad=False),
    '{{"kty":"EC","crv":"P-256","x":"'
    + b64(32, url=True, pad=False)
    + '","y":"'
    + b64(32, url=True, pad=False)
    + '","d":"{s}"}}',
)
one("json_composer_oauth", P, "ghp_" + mixed(36), '{{"github-oauth": {{"github.com": "{s}"}}}}')
one(
    "json_vscode_settings",
    C,
    mixed(40),
    '"sqltools.connections": [{{"name": "prod", "password": "{s}"}}]',
)
one("json_escaped_quotes", C, mixed(32), '"{{\\"client_secret\\": \\"{s}\\"}}"')
one("yaml_block_scalar", C, mixed(48), "smtp:\n  password: >-\n    {s}\n  port: 587")
one("yaml_k8s_env_pair", C, password(), 'env:\n  - name: REDIS_PASSWORD\n    value: "{s}"')
one("yaml_anchor", C, password(), "defaults: &db\n  pass: &pw {s}\nprod:\n  <<: *db")
one("yaml_gha_with", C, mixed(36), "- uses: acme/deploy@v3\n  with:\n    api-token: {s}")
one(
    "yaml_spring_nested",
    C,
    password(),
    "spring:\n  datasource:\n    username: app\n    password: {s}",
)
one("yaml_single_quoted", C, password(), "admin_pw: '{s}'")
one("toml_table", C, password(), '[database]\nuser = "app"\npassword = "{s}"')
one("toml_literal_multiline", C, mixed(44), "[auth]\nsecret = '''{s}'''")
one("toml_cargo_credentials", C, "cio" + mixed(32), '[registry]\ntoken = "{s}"')
one("ini_spaces", C, password(), "[client]\nuser = backup\npass = {s}")
one("ini_pip_conf", C, password(), "[global]\nindex-url = https://ci:{s}@pypi.acme.io/simple/")
one("xml_entry_key", C, password(), '<entry key="smtp.password">{s}</entry>')
one("xml_add_value", C, password(), '<add key="ApiSecret" value="{s}" />')
one(
    "xml_connection_string",
    C,
    password(),
    '<add name="Main" connectionString="Server=sql01;Database=app;User Id=app;Pwd={s};" />',
)
one("properties_colon", C, password(), "ldap.manager.password: {s}")
one("hcl_provider", C, mixed(40), 'provider "datadog" {{\n  app_key = "{s}"\n}}')
one("php_array", C, password(), "'password' => '{s}',")
one("ruby_hash", C, mixed(32), "config.api_secret = '{s}'")
one("python_kwarg", C, password(), "conn = psycopg.connect(host='db', user='app', password='{s}')")
one(
    "python_bytes_secret",
    C,
    "\\x" + "\\x".join(rs(2, HEX) for _ in range(16)),
    "app.secret_key = b'{s}'",
)
one("go_struct", C, password(), 'cfg := Config{{User: "app", Password: "{s}"}}')
one("java_setter", C, password(), 'ds.setPassword("{s}");')
one(
    "csharp_nuget_config",
    C,
    password(),
    '<packageSourceCredentials><acme><add key="ClearTextPassword" value="{s}" /></acme>'
    "</packageSourceCredentials>",
)
one("sql_alter_role", C, password(), "ALTER ROLE report PASSWORD '{s}';")
one("sql_create_login", C, password(), "CREATE LOGIN etl WITH PASSWORD = '{s}';")
one("wireguard_private_key", C, b64(32), "[Interface]\nAddress = 10.8.0.2/24\nPrivateKey = {s}\n")
one("rails_master_key_file", C, hexs(32), "cat config/master.key\n{s}")

# ------------------------------------------------------------- database and service URLs
one("url_mysql_driver", C, password(), "SQLALCHEMY_URL=mysql+pymysql://app:{s}@mysql-01/app")
one("url_clickhouse", C, password(), "clickhouse://default:{s}@ch.acme.io:9440/default?secure=true")
one(
    "url_snowflake", C, password(), "snowflake://etl:{s}@acme-xy12345/ANALYTICS/PUBLIC?warehouse=WH"
)
one("url_oracle", C, password(), "oracle+oracledb://scott:{s}@ora-01:1521/?service_name=ORCL")
one(
    "url_cockroach",
    C,
    password(),
    "cockroachdb://root:{s}@crdb:26257/defaultdb?sslmode=verify-full",
)
one("url_neo4j", C, password(), "neo4j+s://neo4j:{s}@abcd1234.databases.neo4j.io")
one("url_nats", C, password(), "nats://svc:{s}@nats-0.nats:4222")
one("url_mqtt", C, password(), "mqtts://sensor:{s}@broker.acme.io:8883")
one("url_sftp", C, password(), "rclone copy ./out sftp://deploy:{s}@files.acme.io/upload")
one("url_ldap", C, password(), "ldaps://cn=admin:{s}@ldap.acme.io")
one("url_elastic_https", C, password(), "ES_URL=https://elastic:{s}@es.acme.io:9243")
one("url_password_at_sign", C, "p@ss" + mixed(10), "amqp://guest:{s}@rabbit:5672/")
one(
    "url_token_userinfo", P, "ghp_" + mixed(36), "git clone https://{s}@github.com/acme/private.git"
)
one("url_keyring_style", C, password(), "https://__token__:{s}@upload.pypi.acme.io/legacy/")

# ------------------------------------------------------------- URL-encoded
pw = "P@ss:" + mixed(12) + "/#!"
one("urlenc_db_password", C, urllib.parse.quote(pw, safe=""), "postgres://app:{s}@db:5432/app")
pw = mixed(10) + "&=+" + mixed(6)
one(
    "urlenc_form_body",
    C,
    urllib.parse.quote_plus(pw),
    "curl -d 'grant_type=password&username=svc&password={s}' https://sso.acme.io/token",
)
tok = "ghp_" + mixed(36)
one(
    "urlenc_nested_query",
    C,
    urllib.parse.quote(f"https://app/cb?access_token={tok}", safe="")[-45:],
    "GET /login?next=" + urllib.parse.quote(f"https://app/cb?access_token={tok}", safe=""),
)
tok = mixed(40)
one(
    "urlenc_json_state",
    C,
    tok,
    "state=" + urllib.parse.quote(json.dumps({"token": tok}), safe="").replace(tok, "{s}"),
)
pw = mixed(8) + "%" + mixed(8)
one("urlenc_percent_in_pw", C, urllib.parse.quote(pw, safe=""), "redis://:{s}@cache:6379/0")
tok = "xoxb-" + "-".join(
    [str(R.randint(10**11, 10**12)), str(R.randint(10**11, 10**12)), mixed(24)]
)
one(
    "urlenc_slack_token",
    C,
    urllib.parse.quote(tok, safe=""),
    "https://slack.com/api/chat.postMessage?token={s}&channel=C01",
)

# ------------------------------------------------------------- JWTs in new places
one("jwt_cookie", P, jwt({"sub": "42", "role": "admin", "exp": 1999999999}), "Cookie: auth={s}")
one("jwt_es256", P, jwt({"iss": "acme", "sub": "svc"}, alg="ES256"), "id_token={s}")
one(
    "jwt_supabase_service_role",
    P,
    jwt({"iss": "supabase", "ref": rs(20, LOWER), "role": "service_role"}),
    "SUPABASE_SERVICE_ROLE_KEY={s}",
)
one(
    "jwt_in_prose",
    P,
    jwt({"sub": "ci-bot", "scope": "deploy"}),
    "the ci bot's token was {s}, revoke it",
)

# ------------------------------------------------------------- private key blocks in new places
one(
    "pem_yaml_indented",
    C,
    "MIIEowIBAAKCAQEA" + b64(36),
    "tls:\n  key: |\n    -----BEGIN RSA PRIVATE KEY-----\n    {s}\n    "
    + b64(48)
    + "\n    -----END RSA PRIVATE KEY-----",
)
one(
    "pem_ec_no_end",
    C,
    "MHcCAQEEI" + b64(40),
    "pasted the key:\n-----BEGIN EC PRIVATE KEY-----\n{s}\n(rest cut off)",
)
one(
    "pem_quoted_in_env",
    C,
    "MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgw" + b64(30),
    'PRIVATE_KEY="-----BEGIN PRIVATE KEY-----\\n{s}\\n' + b64(48) + '\\n-----END PRIVATE KEY-----"',
)
one(
    "openssh_key_in_json",
    C,
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ" + b64(40),
    '{{"deploy_key": "-----BEGIN OPENSSH PRIVATE KEY-----\\n{s}\\n'
    '-----END OPENSSH PRIVATE KEY-----"}}',
)
one(
    "minisign_secret_key",
    C,
    "RWRTY0Iy" + b64(150, pad=False)[:190],
    "untrusted comment: minisign encrypted secret key\n{s}",
)
one(
    "ssh_key_single_line",
    C,
    "b3BlbnNzaC1rZXktdjEAAAAA" + b64(60),
    "-----BEGIN OPENSSH PRIVATE KEY----- {s} -----END OPENSSH PRIVATE KEY-----",
)

# ------------------------------------------------------------- base64-wrapped credentials
tok = "glpat-" + mixed(20, B64URL)
one("b64_gitlab_token", C, enc(tok), "GITLAB_TOKEN_B64={s}")
pem = "-----BEGIN RSA PRIVATE KEY-----\n" + pem_body(4) + "\n-----END RSA PRIVATE KEY-----\n"
one(
    "b64_pem_k8s_tls",
    C,
    enc(pem),
    "apiVersion: v1\nkind: Secret\ntype: kubernetes.io/tls\ndata:\n  tls.key: {s}",
)
sa = json.dumps(
    {
        "type": "service_account",
        "project_id": "acme-prod",
        "private_key_id": hexs(40),
        "private_key": "-----BEGIN PRIVATE KEY-----\n"
        + pem_body(3)
        + "\n-----END PRIVATE KEY-----\n",
    }
)
one("b64_gcp_service_account", C, enc(sa), "GOOGLE_CREDENTIALS_B64={s}")
one("b64_env_line", C, enc("REDIS_PASSWORD=" + password() + "\n"), "echo {s} | base64 -d >> .env")
one("b64_user_colon_pass_yaml", C, enc("admin:" + password()), "registry:\n  auth: {s}")
one("b64_aws_key_pair", C, enc(f"AKIA{rs(16, UPPER_ALNUM)}:{mixed(40, B64)}"), "S3_CREDS={s}")
one(
    "b64_neptune_style",
    P,
    enc(
        json.dumps(
            {
                "api_address": "https://app.neptune.ai",
                "api_url": "https://app.neptune.ai",
                "api_key": uid(),
            }
        )
    ),
    "NEPTUNE_API_TOKEN={s}",
)
tok = "xoxp-" + "-".join([str(R.randint(10**11, 10**12)) for _ in range(3)]) + "-" + hexs(32)
one("b64_slack_in_json", C, enc(json.dumps({"slack": tok})), 'config blob: "{s}"')
one(
    "b64_urlsafe_token",
    C,
    base64.urlsafe_b64encode(("sk_live_" + mixed(40)).encode()).decode().rstrip("="),
    "the payments key, url-safe base64: {s}",
)
wrapped = enc(
    "-----BEGIN OPENSSH PRIVATE KEY-----\n" + pem_body(5) + "\n-----END OPENSSH PRIVATE KEY-----\n"
)
lines = [wrapped[i : i + 76] for i in range(0, len(wrapped), 76)]
add("b64_wrapped_76_columns", C, "DEPLOY_KEY_B64:\n" + "\n".join(lines), wrapped, parts=lines)
one(
    "b64_docker_config_json",
    C,
    enc(json.dumps({"auths": {"ghcr.io": {"auth": enc("bot:" + "ghp_" + mixed(36))}}})),
    "  .dockerconfigjson: {s}",
)
one("b64_basic_in_url_param", C, enc("svc:" + password()), "https://api.acme.io/v1/report?auth={s}")
one("b64_double_wrapped", C, enc(enc("ghp_" + mixed(36))), "token (base64 twice, don't ask): {s}")

# ------------------------------------------------------------- split and concatenated values
tok = "ghp_" + mixed(36)
add(
    "split_js_concat", C, f'const t = "{tok[:18]}" + "{tok[18:]}";', tok, parts=[tok[:18], tok[18:]]
)
tok = "sk_live_" + mixed(40)
add(
    "split_python_implicit",
    C,
    f'KEY = (\n    "{tok[:24]}"\n    "{tok[24:]}"\n)',
    tok,
    parts=[tok[:24], tok[24:]],
)
tok = "xoxb-" + "-".join(
    [str(R.randint(10**11, 10**12)), str(R.randint(10**11, 10**12)), mixed(24)]
)
add(
    "split_shell_backslash",
    C,
    f"SLACK_BOT={tok[:20]}\\\n{tok[20:]}",
    tok,
    parts=[tok[:20], tok[20:]],
)
tok = jwt({"sub": "admin", "iat": 1700000000})
head, body, sig = tok.split(".")
add("split_jwt_lines", C, f"token:\n{head}.\n{body}.\n{sig}", tok, parts=[body, sig])
key = hexs(64)
add(
    "split_terminal_wrap",
    C,
    f"$ cat api.key\n{key[:40]}\n{key[40:]}\n$",
    key,
    parts=[key[:40], key[40:]],
)
tok = "glpat-" + mixed(20, B64URL)
add(
    "split_yaml_folded",
    C,
    f"gitlab:\n  token: >-\n    {tok[:13]}\n    {tok[13:]}",
    tok,
    parts=[tok[:13], tok[13:]],
)
pw = mixed(24)
add(
    "split_go_concat",
    C,
    f'const dbPass = "{pw[:12]}" +\n\t"{pw[12:]}"',
    pw,
    parts=[pw[:12], pw[12:]],
)
tok = "AIza" + mixed(35, B64URL)
add(
    "split_java_concat",
    C,
    f'String k = "{tok[:20]}"\n    + "{tok[20:]}";',
    tok,
    parts=[tok[:20], tok[20:]],
)
tok = "npm_" + mixed(36)
add(
    "split_array_join",
    C,
    f"token = ''.join(['{tok[:14]}', '{tok[14:28]}', '{tok[28:]}'])",
    tok,
    parts=[tok[:14], tok[14:28], tok[28:]],
)
tok = "sk-ant-api03-" + mixed(80, B64URL) + "AA"
add(
    "split_email_wrap",
    C,
    f"> here's the key for the eval box:\n> {tok[:50]}\n> {tok[50:]}",
    tok,
    parts=[tok[:50], tok[50:]],
)
tok = "dop_v1_" + hexs(64)
add(
    "split_env_two_vars",
    C,
    f"DO_TOKEN_A={tok[:35]}\nDO_TOKEN_B={tok[35:]}\n# token = A + B",
    tok,
    parts=[tok[:35], tok[35:]],
)
pw = password()
add(
    "split_sql_concat",
    C,
    f"CREATE USER etl IDENTIFIED BY '{pw[:5]}' || '{pw[5:]}';",
    pw,
    parts=[pw[5:]] if len(pw[5:]) >= 6 else [pw],
)

# ------------------------------------------------------------- prose and chat
one("prose_wifi", C, password(), "guest wifi is acme-guest, the passphrase is {s}")
one("prose_vpn", C, password(), "VPN: user ops2, pw {s} (rotates monthly)")
one(
    "prose_safe_combo",
    C,
    f"{R.randint(10, 99)}-{R.randint(10, 99)}-{R.randint(10, 99)}-{R.randint(10, 99)}",
    "server room safe combination: {s}",
)
one(
    "prose_recovery_codes",
    C,
    f"{rs(5, LOWER_ALNUM)}-{rs(5, LOWER_ALNUM)}",
    "2FA recovery codes for the admin account: {s}, "
    + f"{rs(5, LOWER_ALNUM)}-{rs(5, LOWER_ALNUM)}",
)
one("prose_api_key_sentence", C, mixed(40), "I used API key {s} to reproduce")
one("prose_secret_parenthesis", C, mixed(32), "rotated the webhook secret ({s}) after the leak")
one("prose_passcode", C, str(R.randint(10**7, 10**8)), "the alarm passcode is {s}")
one(
    "prose_otp_seed",
    C,
    rs(32, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"),
    "TOTP seed for the shared account: {s}",
)
one(
    "prose_otpauth_uri",
    C,
    rs(32, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"),
    "otpauth://totp/ACME:ops?secret={s}&issuer=ACME",
)
one(
    "prose_markdown_table",
    C,
    password(),
    "| service | user | password |\n|---|---|---|\n| grafana | admin | {s} |",
)
one("prose_colon_list", C, password(), "staging creds\n- user: qa-bot\n- pass: {s}")

# ------------------------------------------------------------- file names (provider shape)
one("filename_ssh_key_token", P, "ghs_" + mixed(36), "added {s}.pem to the repo by mistake")
one("filename_env_backup", P, "sk_live_" + mixed(32), "backup of .env.{s}")


def main() -> None:
    out = Path(__file__).with_name("corpus_heldout4.jsonl")
    with out.open("w", encoding="utf-8") as fh:
        for row in ROWS:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    providers = sum(1 for r in ROWS if r["shape"] == P)
    print(f"wrote {len(ROWS)} kinds ({providers} by their own shape) to {out}")


if __name__ == "__main__":
    main()
