# ruff: noqa: E501 - the samples are long literal lines; wrapping them would only hide them
"""Held-out set 8 of the secret-filter benchmark (issue 17), written blind.

    python bench/secrets/make_heldout8.py            # writes corpus_heldout8.jsonl, benign_heldout8.jsonl
    python bench/secrets/make_heldout8.py --stats    # counts per context class, writes nothing

Written without reading gitvault/scrub/, tests/scrub/ or the generators of sets 1-7; only the
`kind` field of sets 6 and 7 was read, so that set 8 holds kinds and contexts they do not.  Every
value is fake: random parts come from one seeded RNG (this script regenerates both files byte for
byte), shaped by the vendors' public formats (prefix, length, alphabet; the GitHub and npm CRC32
checksums and the bech32 checksum are computed).  A sample is `{"kind", "text", "secret",
"shape"}` (+ `"parts"` for a value split into fragments, each of which must be gone); `shape` is
"provider" when the value is recognisable by its own format, "context" when only its surroundings
say it is a secret.  Benign entries are `{"source", "text"}`: look-alikes in the same contexts that a
careful human would not call a secret (hashes, ids, public keys, placeholders, references, masks).
"""

from __future__ import annotations

import base64
import binascii
import json
import random
import string
import sys
import urllib.parse
import uuid
import zlib
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 20261208
rng = random.Random(SEED)

ALNUM = string.ascii_letters + string.digits
LOWER = string.ascii_lowercase + string.digits
UPPER = string.ascii_uppercase + string.digits
LETTERS = string.ascii_letters
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
B32L = "abcdefghijklmnopqrstuvwxyz234567"
DIGITS = string.digits
AWS32 = string.ascii_uppercase + "234567"  # AWS key ids are base32

CORPUS: list[dict[str, object]] = []
BENIGN: list[dict[str, str]] = []
CLASS_OF: dict[str, str] = {}  # kind -> context class (for --stats and the README)
BENIGN_CLASS: Counter[str] = Counter()
_section = "unset"


def section(name: str) -> None:
    global _section
    _section = name


def r(n: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def hx(n: int) -> str:
    return r(n, HEX)


def uid() -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


_SPECIAL = "!#%*+-.:=?@^_~"


def pw(n: int = 16, special: str = _SPECIAL) -> str:
    """A random password with at least one upper, lower, digit and (if allowed) special."""
    while True:
        alphabet = ALNUM + special
        value = r(n, alphabet)
        if (
            any(c.isupper() for c in value)
            and any(c.islower() for c in value)
            and any(c.isdigit() for c in value)
            and (not special or any(c in special for c in value))
            and value[0].isalnum()  # a leading '#', '*', '!' or '~' would change a file's syntax
        ):
            return value


_WORDS = [
    "amber",
    "anchor",
    "apron",
    "atlas",
    "bamboo",
    "basil",
    "beacon",
    "birch",
    "bison",
    "cactus",
    "canyon",
    "cedar",
    "cobalt",
    "comet",
    "copper",
    "coral",
    "cricket",
    "dahlia",
    "delta",
    "ember",
    "falcon",
    "fennel",
    "fjord",
    "garnet",
    "glacier",
    "granite",
    "harbor",
    "hazel",
    "heron",
    "indigo",
    "ivory",
    "jasper",
    "juniper",
    "kelp",
    "lagoon",
    "lantern",
    "lemur",
    "lilac",
    "lotus",
    "magnet",
    "maple",
    "marble",
    "meadow",
    "mesa",
    "nectar",
    "nickel",
    "nutmeg",
    "oasis",
    "onyx",
    "orchid",
    "otter",
    "pebble",
    "pepper",
    "pistachio",
    "plume",
    "quartz",
    "quill",
    "raven",
    "reef",
    "saffron",
    "sierra",
    "spruce",
    "sundial",
    "tundra",
    "umber",
    "velvet",
    "walnut",
    "willow",
    "yarrow",
    "zephyr",
]


def words(n: int = 4, sep: str = "-") -> str:
    return sep.join(rng.choice(_WORDS) for _ in range(n))


def b64(data: str | bytes) -> str:
    raw = data.encode() if isinstance(data, str) else data
    return base64.b64encode(raw).decode()


def b64url(data: str | bytes) -> str:
    raw = data.encode() if isinstance(data, str) else data
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def rbytes(n: int) -> bytes:
    return bytes(rng.getrandbits(8) for _ in range(n))


def jwt(payload: dict[str, object], alg: str = "HS256", kid: str | None = None) -> str:
    header: dict[str, object] = {"alg": alg, "typ": "JWT"}
    if kid:
        header["kid"] = kid
    sig_len = {"HS256": 32, "RS256": 256, "ES256": 64, "EdDSA": 64}[alg]
    return ".".join(
        (
            b64url(json.dumps(header, separators=(",", ":"))),
            b64url(json.dumps(payload, separators=(",", ":"))),
            b64url(rbytes(sig_len)),
        )
    )


_B62 = string.digits + string.ascii_uppercase + string.ascii_lowercase


def base62(n: int, width: int = 6) -> str:
    out = ""
    while n:
        n, rem = divmod(n, 62)
        out = _B62[rem] + out
    return out.rjust(width, "0")


def crc_token(prefix: str, body_len: int = 30) -> str:
    """GitHub / npm token: random body + base62(CRC32(body)) in 6 characters."""
    body = r(body_len)
    return prefix + body + base62(zlib.crc32(body.encode()))


_BECH = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def _polymod(values: list[int]) -> int:
    gen = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)
    chk = 1
    for v in values:
        top = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ v
        for i in range(5):
            chk ^= gen[i] if (top >> i) & 1 else 0
    return chk


def bech32(hrp: str, data: bytes) -> str:
    acc, bits, five = 0, 0, []
    for byte in data:
        acc = (acc << 8) | byte
        bits += 8
        while bits >= 5:
            bits -= 5
            five.append((acc >> bits) & 31)
    if bits:
        five.append((acc << (5 - bits)) & 31)
    expanded = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]
    mod = _polymod(expanded + five + [0] * 6) ^ 1
    check = [(mod >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(_BECH[d] for d in five + check)


def pem(label: str, body_bytes: int = 600) -> str:
    body = b64(rbytes(body_bytes))
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----"


def openai_proj() -> str:
    """sk-proj- key: 74 + T3BlbkFJ + 74 characters (the public shape of project keys)."""
    return "sk-proj-" + r(74, B64URL) + "T3BlbkFJ" + r(74, B64URL)


def add(kind: str, text: str, secret: str, shape: str, parts: list[str] | None = None) -> None:
    assert kind not in CLASS_OF, f"duplicate kind {kind}"
    assert shape in ("provider", "context"), kind
    for piece in parts or [secret]:
        assert piece in text, f"{kind}: {piece!r} not in its text"
        assert len(piece) >= 6, f"{kind}: fragment {piece!r} too short to score"
    row: dict[str, object] = {"kind": kind, "text": text, "secret": secret, "shape": shape}
    if parts:
        row["parts"] = parts
    CORPUS.append(row)
    CLASS_OF[kind] = _section


def ben(source: str, text: str) -> None:
    BENIGN.append({"source": f"heldout8:{_section}:{source}", "text": text})
    BENIGN_CLASS[_section] += 1


# ============================================================================ (a) vendor formats


def vendors() -> None:  # noqa: PLR0915 - one line per kind reads best
    section("vendor: source forges and CI")
    s = "glft-" + r(20, B64URL)
    add(
        "gitlab_feed_token_atom_url",
        f"Subscribed the team channel to https://gitlab.acme.dev/dashboard/issues.atom?feed_token={s}&state=opened",
        s,
        "provider",
    )
    s = "glimt-" + r(25, B64URL)
    add(
        "gitlab_incoming_mail_token_profile_api",
        json.dumps({"id": 412, "username": "mbeck", "incoming_email_token": s, "state": "active"}),
        s,
        "provider",
    )
    s = "glagent-" + r(50, B64URL)
    add(
        "gitlab_agent_token_helm_upgrade",
        f"helm upgrade --install prod-agent gitlab/gitlab-agent --namespace gitlab-agent-prod --create-namespace --set config.token={s} --set config.kasAddress=wss://kas.gitlab.com",
        s,
        "provider",
    )
    s = "glffct-" + r(20, B64URL)
    add(
        "gitlab_feature_flag_unleash_instance_id",
        f"const unleash = initialize({{\n  url: 'https://gitlab.com/api/v4/feature_flags/unleash/48213',\n  appName: 'production',\n  instanceId: '{s}',\n}});",
        s,
        "provider",
    )
    s = "glsoat-" + r(20, B64URL)
    add(
        "gitlab_scim_token_okta_setup_note",
        f"Okta provisioning → SCIM connector base URL https://gitlab.com/api/scim/v2/groups/acme, Unique identifier: userName, Bearer {s}",
        s,
        "provider",
    )
    s = r(32, LOWER)
    add(
        "gitlab_session_cookie_curl",
        f"curl -s -b '_gitlab_session={s}' https://gitlab.internal/-/profile/personal_access_tokens | grep -c revoke",
        s,
        "context",
    )
    s = "sgp_" + hx(16) + "_" + hx(40)
    add(
        "sourcegraph_token_src_cli_env",
        f"export SRC_ENDPOINT=https://sourcegraph.acme.io\nexport SRC_ACCESS_TOKEN={s}\nsrc search 'repo:^github.com/acme/ lang:go context.TODO'",
        s,
        "provider",
    )
    s = "pat." + r(22, B64URL) + "." + r(24) + "." + r(20)
    add(
        "harness_pat_terraform_provider",
        f'provider "harness" {{\n  endpoint         = "https://app.harness.io/gateway"\n  account_id       = "{r(22, B64URL)}"\n  platform_api_key = "{s}"\n}}',
        s,
        "provider",
    )
    s = "API-" + r(26, UPPER)
    add(
        "octopus_api_key_octo_cli",
        f'octo create-release --project "Payments API" --version 4.2.{rng.randint(10, 99)} --server https://deploy.acme.io --apiKey {s}',
        s,
        "provider",
    )
    s = "sqa_" + hx(40)
    add(
        "sonar_global_analysis_token_gradle",
        f"./gradlew sonar -Dsonar.host.url=https://sonar.acme.io -Dsonar.token={s} -Dsonar.projectKey=acme_billing",
        s,
        "provider",
    )
    s = "pypi-AgENdGVzdC5weXBpLm9yZw" + r(150, B64URL)
    add(
        "testpypi_token_github_action_with",
        f"      - uses: pypa/gh-action-pypi-publish@release/v1\n        with:\n          repository-url: https://test.pypi.org/legacy/\n          password: {s}",
        s,
        "provider",
    )
    s = "CLOJARS_" + r(60, LOWER)
    add(
        "clojars_deploy_token_lein_profiles",
        f'{{:auth {{:repository-auth {{#"clojars" {{:username "kdm" :password "{s}"}}}}}}}}',
        s,
        "provider",
    )
    s = "tk-us-" + r(48, B64URL)
    add(
        "scalingo_token_cli_login",
        f"$ scalingo login --api-token {s}\n-----> Logged in as kdm@acme.io",
        s,
        "provider",
    )
    s = crc_token("ghs_", 30)
    add(
        "github_installation_token_git_insteadof",
        f'git config --global url."https://x-access-token:{s}@github.com/".insteadOf "https://github.com/"',
        s,
        "provider",
    )
    s = crc_token("ghp_", 30)
    add(
        "github_pat_nix_conf_access_tokens",
        f"# /etc/nix/nix.conf\nexperimental-features = nix-command flakes\naccess-tokens = github.com={s}",
        s,
        "provider",
    )
    s = crc_token("gho_", 30)
    add(
        "github_oauth_hub_config",
        f"github.com:\n- user: kdm\n  oauth_token: {s}\n  protocol: https",
        s,
        "provider",
    )
    s = crc_token("ghp_", 30)
    add(
        "github_pat_gh_auth_login_herestring",
        f"gh auth login --hostname github.com --with-token <<< {s}",
        s,
        "provider",
    )
    s = r(40, HEX)
    add(
        "gitea_token_tea_login",
        f"tea login add --name codeberg --url https://codeberg.org --token {s}",
        s,
        "context",
    )
    s = r(20, ALNUM)
    add(
        "bitbucket_repo_access_token_pipelines_clone",
        f"git clone https://x-token-auth:ATCTT3xFfGN0{s}{r(160, B64URL)}={hx(8).upper()}@bitbucket.org/acme/ledger.git",
        f"ATCTT3xFfGN0{s}",
        "provider",
    )

    section("vendor: Slack and OpenAI formats")
    s = "xoxe.xoxp-1-" + r(164, UPPER)
    add(
        "slack_config_access_token_manifest_cli",
        f"slack manifest update --app A0{r(9, UPPER)} --token {s} --manifest manifest.json",
        s,
        "provider",
    )
    s = f"xoxc-{r(12, DIGITS)}-{r(12, DIGITS)}-{r(13, DIGITS)}-{hx(64)}"
    cookie = "xoxd-" + urllib.parse.quote(b64(rbytes(120)), safe="")
    add(
        "slack_client_token_with_d_cookie_scraper",
        f"SLACK_MCP_XOXC_TOKEN={s}\nSLACK_MCP_XOXD_TOKEN={cookie}",
        s,
        "provider",
    )
    s = f"https://hooks.slack.com/triggers/T0{r(8, UPPER)}/{r(13, DIGITS)}/{hx(32)}"
    add(
        "slack_workflow_trigger_url_cron",
        f"0 9 * * 1 curl -s -X POST -H 'Content-Type: application/json' -d '{{\"week\": \"$(date +%V)\"}}' {s}",
        s,
        "provider",
    )
    s = "sk-" + r(20) + "T3BlbkFJ" + r(20)
    add(
        "openai_legacy_user_key_shell_rc",
        f"# ~/.zshrc (2023, never cleaned up)\nexport OPENAI_API_KEY={s}\nalias gpt='llm -m gpt-4o'",
        s,
        "provider",
    )

    section("vendor: cloud and infrastructure")
    left = r(52) + "JQQJ99" + r(1) + rng.choice("ABCDEFGHIJKL") + r(16) + "AZDO" + r(4)
    add(
        "azure_devops_pat_84_az_devops_login",
        f"echo {left} | az devops login --organization https://dev.azure.com/acme",
        left,
        "provider",
    )
    s = r(52) + "JQQJ99" + r(1) + rng.choice("ABCDEFGHIJKL") + r(8) + "AAAAACOG" + r(4)
    s = s + r(84 - len(s))
    add(
        "azure_ai_services_key_84_openai_client",
        f'client = AzureOpenAI(\n    azure_endpoint="https://acme-eastus2.openai.azure.com",\n    api_key="{s}",\n    api_version="2025-04-01-preview",\n)',
        s,
        "provider",
    )
    s = r(86, B64) + "=="
    add(
        "azure_cosmos_account_key_conn_string",
        f"COSMOS_CONNECTION=AccountEndpoint=https://acme-orders.documents.azure.com:443/;AccountKey={s};",
        s,
        "context",
    )
    s = r(43, B64) + "="
    add(
        "azure_service_bus_sas_key_func_settings",
        json.dumps(
            {
                "IsEncrypted": False,
                "Values": {
                    "ServiceBusConnection": f"Endpoint=sb://acme-bus.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={s}"
                },
            },
            indent=2,
        ),
        s,
        "context",
    )
    s = r(54, B64URL) + "=="
    add(
        "azure_function_key_webhook_url",
        f"GitHub webhook → https://acme-hooks.azurewebsites.net/api/OnPush?code={s}&clientId=default",
        s,
        "context",
    )
    body = f"BedrockAPIKey-{r(4, LOWER)}-at-{r(12, DIGITS)}:{r(60, B64)}"
    s = "ABSK" + b64(body)
    add(
        "aws_bedrock_long_lived_key_export",
        f"export AWS_BEARER_TOKEN_BEDROCK={s}\nclaude --model us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        s,
        "provider",
    )
    query = (
        "bedrock.amazonaws.com/?Action=CallWithBearerToken&X-Amz-Algorithm=AWS4-HMAC-SHA256"
        f"&X-Amz-Credential=ASIA{r(16, AWS32)}%2F20261202%2Fus-west-2%2Fbedrock%2Faws4_request"
        f"&X-Amz-Date=20261202T101522Z&X-Amz-Expires=43200&X-Amz-Security-Token={urllib.parse.quote(r(300, B64), safe='')}"
        f"&X-Amz-Signature={hx(64)}&X-Amz-SignedHeaders=host&Version=1"
    )
    s = "bedrock-api-key-" + b64(query)
    add(
        "aws_bedrock_short_lived_key_env_file",
        f"# expires in 12h, regenerate from the console\nAWS_BEARER_TOKEN_BEDROCK={s}",
        s,
        "provider",
    )
    s = "amzn1.oa2-cs.v1." + hx(64)
    add(
        "amazon_lwa_client_secret_sp_api",
        f"credentials = dict(\n    refresh_token=os.environ['SP_REFRESH'],\n    lwa_app_id='amzn1.application-oa2-client.{hx(32)}',\n    lwa_client_secret='{s}',\n)",
        s,
        "provider",
    )
    s = "Atzr|IwEB" + r(300, B64URL)
    add(
        "amazon_lwa_refresh_token_ads_yaml",
        f'amazon_ads:\n  region: EU\n  profile_id: 3124578812\n  refresh_token: "{s}"',
        s,
        "provider",
    )
    s = f"amzn.mws.{uid()}"
    add(
        "amazon_mws_auth_token_seller_csv",
        f"seller_id,marketplace,mws_auth_token\nA2EUQ1WTGCTBG2,A1PA6795UKMFR9,{s}",
        s,
        "provider",
    )
    ident = "GOOG1E" + r(54, UPPER)
    s = r(40, B64)
    add(
        "gcs_hmac_secret_boto_config",
        f"[Credentials]\ngs_access_key_id = {ident}\ngs_secret_access_key = {s}\n\n[Boto]\nhttps_validate_certificates = True",
        s,
        "context",
    )
    s = "v1.0-" + hx(24) + "-" + hx(146)
    add(
        "cloudflare_origin_ca_key_env",
        f"CF_ORIGIN_CA_KEY={s}\n# used by origin-ca-issuer in cert-manager",
        s,
        "provider",
    )
    tunnel = {"a": hx(32), "t": uid(), "s": b64(rbytes(32))}
    s = b64(json.dumps(tunnel, separators=(",", ":")))
    add(
        "cloudflare_tunnel_token_service_install",
        f"sudo cloudflared service install {s}",
        s,
        "provider",
    )
    s = hx(64)
    add(
        "cloudflare_access_service_token_headers",
        f"curl https://grafana.acme.io/api/health -H 'CF-Access-Client-Id: {hx(32)}.access' -H 'CF-Access-Client-Secret: {s}'",
        s,
        "context",
    )
    s = hx(64)
    add(
        "cloudflare_r2_secret_rclone_env",
        f"RCLONE_CONFIG_R2_TYPE=s3\nRCLONE_CONFIG_R2_PROVIDER=Cloudflare\nRCLONE_CONFIG_R2_ACCESS_KEY_ID={hx(32)}\nRCLONE_CONFIG_R2_SECRET_ACCESS_KEY={s}\nRCLONE_CONFIG_R2_ENDPOINT=https://{hx(32)}.r2.cloudflarestorage.com",
        s,
        "context",
    )
    s = "K005" + r(27, ALNUM + "+/")
    add(
        "backblaze_b2_application_key_authorize",
        f"b2 account authorize 005{hx(22)} {s}",
        s,
        "provider",
    )
    s = r(43, B64)
    add(
        "digitalocean_spaces_secret_s3cmd_flags",
        f"s3cmd --access_key=DO00{r(16, UPPER)} --secret_key={s} --host=fra1.digitaloceanspaces.com --host-bucket='%(bucket)s.fra1.digitaloceanspaces.com' ls",
        s,
        "context",
    )
    s = "dor_v1_" + hx(64)
    add(
        "digitalocean_refresh_token_oauth_json",
        json.dumps(
            {
                "access_token": "[stored separately]",
                "token_type": "bearer",
                "expires_in": 2592000,
                "refresh_token": s,
                "scope": "read write",
            }
        ),
        s,
        "provider",
    )
    s = r(36, UPPER)
    add(
        "vultr_api_key_cli_env",
        f"VULTR_API_KEY={s} vultr-cli instance list --output json",
        s,
        "context",
    )
    s = r(32, ALNUM)
    add(
        "ovh_application_secret_conf",
        f"[default]\nendpoint=ovh-eu\n\n[ovh-eu]\napplication_key={r(16)}\napplication_secret={s}\nconsumer_key={r(32)}",
        s,
        "context",
    )
    s = f"tskey-api-k{r(10)}CNTRL-{r(33)}"
    add(
        "tailscale_api_key_terraform",
        f'provider "tailscale" {{\n  api_key = "{s}"\n  tailnet = "acme.org.github"\n}}',
        s,
        "provider",
    )
    s = f"tskey-client-k{r(10)}CNTRL-{r(33)}"
    add(
        "tailscale_oauth_client_secret_k8s_operator",
        f"helm upgrade --install tailscale-operator tailscale/tailscale-operator --set-string oauth.clientId=k{r(10)}CNTRL --set-string oauth.clientSecret={s} --wait",
        s,
        "provider",
    )
    s = f"token-{r(5, string.ascii_lowercase)}:{r(54, LOWER)}"
    add(
        "rancher_api_token_cli_login",
        f"rancher login https://rancher.acme.io/v3 --token {s} --context c-m-7x2k9:p-4qz8t",
        s,
        "provider",
    )
    s = "ptr_" + r(43, B64) + "="
    add(
        "portainer_access_token_header",
        f"curl -s -H 'X-API-Key: {s}' https://portainer.acme.io/api/endpoints | jq '.[].Name'",
        s,
        "provider",
    )
    s = jwt(
        {"iss": "argocd", "sub": "admin:login", "nbf": 1764661200, "iat": 1764661200, "jti": uid()}
    )
    add(
        "argocd_auth_token_cli_config",
        f"contexts:\n- name: argocd.acme.io\n  server: argocd.acme.io\n  user: argocd.acme.io\nusers:\n- auth-token: {s}\n  name: argocd.acme.io",
        s,
        "provider",
    )
    s = uid()
    add(
        "consul_http_token_envrc",
        f"export CONSUL_HTTP_ADDR=https://consul.service.dc1:8501\nexport CONSUL_HTTP_TOKEN={s}\nconsul kv get -recurse app/",
        s,
        "context",
    )
    s = uid()
    add(
        "nomad_acl_token_job_run",
        f"NOMAD_ADDR=https://nomad.acme.io:4646 NOMAD_TOKEN={s} nomad job run deploy/api.nomad.hcl",
        s,
        "context",
    )
    s = hx(32)
    add(
        "teleport_join_token_start",
        f"sudo teleport start --roles=node --token={s} --auth-server=tele.acme.io:443 --labels=env=staging",
        s,
        "context",
    )
    s = f"sha256~{r(43, B64URL)}"
    add(
        "openshift_token_oc_login",
        f"oc login --token={s} --server=https://api.ocp4.acme.io:6443",
        s,
        "provider",
    )
    s = f"{r(6)}_{r(29)}_mmk"
    add(
        "maxmind_license_key_geoipupdate",
        f"# /etc/GeoIP.conf\nAccountID 1089231\nLicenseKey {s}\nEditionIDs GeoLite2-ASN GeoLite2-City GeoLite2-Country",
        s,
        "provider",
    )
    s = "dnkey-" + r(26, UPPER) + "-" + r(52, UPPER)
    add(
        "defined_networking_token_dnclient",
        f"dnclient enroll --code {r(8, UPPER)} && export DN_API_KEY={s}",
        s,
        "provider",
    )

    section("vendor: data, ML and AI tools")
    s = "csk-" + r(48, LOWER)
    add(
        "cerebras_key_opencode_json",
        json.dumps(
            {
                "$schema": "https://opencode.ai/config.json",
                "provider": {"cerebras": {"options": {"apiKey": s}}},
                "model": "cerebras/qwen-3-coder-480b",
            },
            indent=2,
        ),
        s,
        "provider",
    )
    s = "napi_" + r(64, LOWER)
    add(
        "neon_api_key_mcp_add",
        f"claude mcp add neon -- npx -y @neondatabase/mcp-server-neon start {s}",
        s,
        "provider",
    )
    s = "rnd_" + r(28)
    add(
        "render_api_key_github_secret_cmd",
        f'gh secret set RENDER_API_KEY --repo acme/site --body "{s}"',
        s,
        "provider",
    )
    s = "bb_live_" + r(27, B64URL)
    add(
        "browserbase_key_stagehand_ts",
        f'const stagehand = new Stagehand({{\n  env: "BROWSERBASE",\n  apiKey: "{s}",\n  projectId: "{uid()}",\n}});',
        s,
        "provider",
    )
    s = "fc-" + hx(32)
    add(
        "firecrawl_key_python_app",
        f'from firecrawl import Firecrawl\n\nfc = Firecrawl(api_key="{s}")\ndoc = fc.scrape("https://docs.acme.io", formats=["markdown"])',
        s,
        "provider",
    )
    s = "e2b_" + hx(40)
    add(
        "e2b_key_sandbox_dotenv",
        f"# .env.local\nE2B_API_KEY={s}\nE2B_TEMPLATE=code-interpreter-v1",
        s,
        "provider",
    )
    s = "llx-" + r(48)
    add(
        "llamacloud_key_llamaparse_cli",
        f"llama-parse --api-key {s} --result-type markdown reports/q3.pdf > q3.md",
        s,
        "provider",
    )
    s = "os_v2_app_" + r(113, B32L)
    add(
        "onesignal_rest_key_php_header",
        f"curl_setopt($ch, CURLOPT_HTTPHEADER, ['Content-Type: application/json', 'Authorization: Key {s}']);",
        s,
        "provider",
    )
    s = "api_org_" + r(34, LETTERS)
    add(
        "huggingface_org_token_datasets_push",
        f">>> ds.push_to_hub('acme/support-tickets-2026', token='{s}', private=True)",
        s,
        "provider",
    )
    s = "4b1d" + r(38)
    add(
        "clickhouse_cloud_api_secret_tf",
        f'provider "clickhouse" {{\n  organization_id = "{uid()}"\n  token_key       = "{r(20, UPPER)}"\n  token_secret    = "{s}"\n}}',
        s,
        "provider",
    )
    s = f"{uid()}:{hx(32)}"
    add(
        "fal_key_python_env",
        f'os.environ["FAL_KEY"] = "{s}"\nresult = fal_client.subscribe("fal-ai/flux/dev", arguments={{"prompt": prompt}})',
        s,
        "provider",
    )
    s = f"{uid()}:fx"
    add(
        "deepl_free_key_translator",
        f'translator = deepl.Translator("{s}")\nprint(translator.translate_text("Hallo Welt", target_lang="EN-GB"))',
        s,
        "provider",
    )
    tid, tsec = "ak-" + r(22), "as-" + r(22)
    add(
        "modal_token_secret_modal_toml",
        f'[acme]\ntoken_id = "{tid}"\ntoken_secret = "{tsec}"\nactive = true',
        tsec,
        "provider",
    )
    neptune = {
        "api_address": "https://app.neptune.ai",
        "api_url": "https://app.neptune.ai",
        "api_key": uid(),
    }
    s = b64(json.dumps(neptune, separators=(",", ":")))
    add(
        "neptune_api_token_env",
        f"NEPTUNE_PROJECT=acme/ranker\nNEPTUNE_API_TOKEN={s}",
        s,
        "provider",
    )
    s = hx(32)
    add("kaggle_json_key", json.dumps({"username": "mbeck42", "key": s}), s, "context")
    s = "sk-" + r(48)
    add(
        "stability_key_node_sdk",
        f"const res = await fetch('https://api.stability.ai/v2beta/stable-image/generate/core', {{\n  method: 'POST',\n  headers: {{ authorization: 'Bearer {s}', accept: 'image/*' }},\n  body: form,\n}});",
        s,
        "context",
    )
    s = hx(40)
    add(
        "deepgram_key_token_header",
        f"curl -X POST 'https://api.deepgram.com/v1/listen?model=nova-3' -H 'Authorization: Token {s}' --data-binary @call.wav",
        s,
        "context",
    )
    s = hx(32)
    add(
        "assemblyai_key_python",
        f'aai.settings.api_key = "{s}"\ntranscript = aai.Transcriber().transcribe("./standup.mp3")',
        s,
        "context",
    )
    s = "pa-" + r(43, B64URL)
    add(
        "voyage_key_langchain",
        f'embeddings = VoyageAIEmbeddings(voyage_api_key="{s}", model="voyage-3-large")',
        s,
        "provider",
    )
    s = hx(64)
    add(
        "serpapi_key_query_string",
        f"GET https://serpapi.com/search.json?engine=google&q=gitvault+release&api_key={s} 200 OK 412ms",
        s,
        "context",
    )
    s = "BSA" + r(28)
    add(
        "brave_search_key_mcp_env",
        json.dumps(
            {
                "mcpServers": {
                    "brave-search": {
                        "command": "npx",
                        "args": ["-y", "@modelcontextprotocol/server-brave-search"],
                        "env": {"BRAVE_API_KEY": s},
                    }
                }
            },
            indent=2,
        ),
        s,
        "provider",
    )
    s = f"sk-helicone-{r(7, LOWER)}-{r(7, LOWER)}-{r(7, LOWER)}-{r(7, LOWER)}"
    add(
        "helicone_key_openai_default_headers",
        f'client = OpenAI(base_url="https://oai.helicone.ai/v1", default_headers={{"Helicone-Auth": "Bearer {s}"}})',
        s,
        "provider",
    )
    s = "A" + r(70, B64URL) + "="
    add(
        "upstash_redis_rest_token_vercel_env",
        f'UPSTASH_REDIS_REST_URL="https://eu1-golden-owl-31822.upstash.io"\nUPSTASH_REDIS_REST_TOKEN="{s}"',
        s,
        "context",
    )
    s = jwt({"a": "rw", "iat": 1764659000, "id": uid()}, alg="EdDSA")
    add(
        "turso_db_token_create_output",
        f"$ turso db tokens create acme-prod --expiration none\n{s}",
        s,
        "provider",
    )
    s = f"prod:{rng.choice(_WORDS)}-{rng.choice(_WORDS)}-{rng.randint(100, 999)}|" + b64url(
        rbytes(60)
    )
    add(
        "convex_deploy_key_ci",
        f"- run: npx convex deploy --cmd 'npm run build'\n  env:\n    CONVEX_DEPLOY_KEY: \"{s}\"",
        s,
        "provider",
    )
    s = r(64, HEX)
    add(
        "meilisearch_master_key_compose",
        f"  meilisearch:\n    image: getmeili/meilisearch:v1.12\n    environment:\n      MEILI_ENV: production\n      MEILI_MASTER_KEY: {s}",
        s,
        "context",
    )
    s = r(32)
    add(
        "typesense_admin_key_server_flag",
        f"./typesense-server --data-dir=/var/lib/typesense --api-key={s} --enable-cors",
        s,
        "context",
    )
    s = r(40, B64URL)
    add(
        "qdrant_api_key_client",
        f'client = QdrantClient(url="https://7f3a-eu.cloud.qdrant.io:6333", api_key="{s}")',
        s,
        "context",
    )
    s = hx(32)
    add(
        "mlflow_tracking_password_env",
        f"MLFLOW_TRACKING_URI=https://mlflow.acme.io\nMLFLOW_TRACKING_USERNAME=ci-bot\nMLFLOW_TRACKING_PASSWORD={s}",
        s,
        "context",
    )
    s = "xaat-" + uid()
    add(
        "axiom_api_token_vector_toml",
        f'[sinks.axiom]\ntype = "axiom"\ninputs = ["app_logs"]\ndataset = "prod-logs"\ntoken = "{s}"',
        s,
        "provider",
    )
    s = uid()
    add(
        "splunk_hec_token_header",
        f'curl -k https://splunk.acme.io:8088/services/collector/event -H "Authorization: Splunk {s}" -d \'{{"event": "deploy finished"}}\'',
        s,
        "context",
    )
    s = r(64, LOWER)
    add(
        "sumologic_access_key_collector",
        f"sumo:\n  accessid: su{r(12)}\n  accesskey: {s}",
        s,
        "context",
    )
    s = b64(f"{r(20, B64URL)}:{r(22, B64URL)}")
    add(
        "elastic_api_key_header",
        f"curl -H 'Authorization: ApiKey {s}' 'https://acme.es.europe-west1.gcp.cloud.es.io/_cat/indices?v'",
        s,
        "context",
    )
    s = hx(32)
    add(
        "rollbar_server_token_init",
        f"rollbar.init('{s}', environment='production', code_version=GIT_SHA)",
        s,
        "context",
    )
    s = uid()
    add(
        "opsgenie_geniekey_header",
        f"curl -X POST https://api.opsgenie.com/v2/alerts -H 'Authorization: GenieKey {s}' -H 'Content-Type: application/json' -d @alert.json",
        s,
        "context",
    )
    s = r(20, ALNUM + "_-+")
    add(
        "pagerduty_rest_key_token_header",
        f"curl -H 'Authorization: Token token={s}' -H 'Accept: application/vnd.pagerduty+json;version=2' https://api.pagerduty.com/incidents",
        s,
        "context",
    )

    section("vendor: SaaS, payments, messaging")
    s = "pat-na1-" + uid()
    add(
        "hubspot_private_app_token_client",
        f'hubspot_client = HubSpot(access_token="{s}")',
        s,
        "provider",
    )
    s = f"2/{r(16, DIGITS)}/{r(16, DIGITS)}:{hx(32)}"
    add(
        "asana_pat_curl",
        f'curl https://app.asana.com/api/1.0/users/me -H "Authorization: Bearer {s}"',
        s,
        "provider",
    )
    s = f"pk_{r(8, DIGITS)}_{r(32, UPPER)}"
    add(
        "clickup_token_n8n_credential",
        json.dumps({"name": "ClickUp account", "type": "clickUpApi", "data": {"accessToken": s}}),
        s,
        "provider",
    )
    s = "ATTA" + hx(64) + hx(8).upper()
    add(
        "trello_token_query_url",
        f"https://api.trello.com/1/members/me/boards?key={hx(32)}&token={s}",
        s,
        "provider",
    )
    s = b64(f"tok:{uid()}:1:0")
    add(
        "intercom_access_token_ruby",
        f"intercom = Intercom::Client.new(token: '{s}')",
        s,
        "provider",
    )
    s = f"00D{r(12, ALNUM)}!AQ{r(4)}.{r(96, B64URL)}"
    add(
        "salesforce_session_id_sfdx_output",
        f"=== Org Description\nKEY              VALUE\nAccess Token     {s}\nAlias            acme-prod\nInstance Url     https://acme.my.salesforce.com",
        s,
        "provider",
    )
    s = f"1000.{hx(32)}.{hx(32)}"
    add(
        "zoho_refresh_token_env",
        f"ZOHO_CLIENT_ID=1000.{r(30, UPPER)}\nZOHO_REFRESH_TOKEN={s}",
        s,
        "provider",
    )
    s = "pk_" + hx(34)
    add(
        "klaviyo_private_key_header",
        f"requests.get('https://a.klaviyo.com/api/lists/', headers={{'Authorization': 'Klaviyo-API-Key {s}', 'revision': '2025-10-15'}})",
        s,
        "provider",
    )
    s = "mlsn." + hx(64)
    add(
        "mailersend_token_laravel_env",
        f"MAIL_MAILER=mailersend\nMAILERSEND_API_KEY={s}",
        s,
        "provider",
    )
    s = "md-" + r(22, B64URL)
    add(
        "mandrill_key_smtp_settings",
        f"EMAIL_HOST = 'smtp.mandrillapp.com'\nEMAIL_HOST_USER = 'Acme Ltd'\nEMAIL_HOST_PASSWORD = '{s}'",
        s,
        "provider",
    )
    s = "sk_live_" + hx(40)
    add(
        "paystack_secret_key_node",
        f"const paystack = require('paystack-api')('{s}');",
        s,
        "provider",
    )
    s = "live_" + r(30)
    add(
        "mollie_api_key_php",
        f'$mollie = new \\Mollie\\Api\\MollieApiClient();\n$mollie->setApiKey("{s}");',
        s,
        "provider",
    )
    s = r(24)
    add(
        "razorpay_key_secret_client",
        f'client = razorpay.Client(auth=("rzp_live_{r(14)}", "{s}"))',
        s,
        "context",
    )
    s = f"pdl_live_apikey_01{r(24, '0123456789abcdefghjkmnpqrstvwxyz')}_{r(22)}_A{r(2, UPPER)}"
    add(
        "paddle_billing_api_key_env",
        f"PADDLE_ENVIRONMENT=production\nPADDLE_API_KEY={s}",
        s,
        "provider",
    )
    s = "A21AA" + r(92, B64URL)
    add(
        "paypal_access_token_curl_verbose",
        f"> GET /v2/checkout/orders/5O190127TN364715T HTTP/2\n> Host: api-m.paypal.com\n> Authorization: Bearer {s}\n> Accept: */*",
        s,
        "provider",
    )
    s = "cs_" + hx(40)
    add(
        "woocommerce_consumer_secret_wp_cli",
        f"wp wc product list --user=1 --consumer_key=ck_{hx(40)} --consumer_secret={s} --url=https://shop.acme.io",
        s,
        "provider",
    )
    s = f"secret-live-{r(28, B64URL)}="
    add(
        "stytch_project_secret_client",
        f'client = stytch.Client(project_id="project-live-{uid()}", secret="{s}")',
        s,
        "provider",
    )
    s = "KakaoAK " + hx(32)
    add(
        "kakao_rest_key_header",
        f"curl -G 'https://dapi.kakao.com/v2/local/search/address.json' -H 'Authorization: {s}' --data-urlencode 'query=판교역로 235'",
        s[8:],
        "context",
    )
    s = "vk1.a." + r(200, B64URL)
    add("vk_access_token_python", f"vk_session = vk_api.VkApi(token='{s}')", s, "provider")
    s = r(172, B64) + "="
    add(
        "line_channel_access_token_sdk",
        f"configuration = Configuration(access_token='{s}')\nhandler = WebhookHandler('{hx(32)}')",
        s,
        "context",
    )
    s = f"{hx(24)}:{hx(64)}"
    add(
        "ghost_admin_api_key_js",
        f"const api = new GhostAdminAPI({{\n  url: 'https://blog.acme.io',\n  key: '{s}',\n  version: 'v5.0',\n}});",
        s,
        "provider",
    )
    s = " ".join(r(4, ALNUM) for _ in range(6))
    add(
        "wordpress_application_password_curl",
        f'curl --user "deploybot:{s}" https://acme.io/wp-json/wp/v2/posts?status=draft',
        s,
        "context",
    )
    s = "-".join(r(4, string.ascii_lowercase + string.digits) for _ in range(4))
    add(
        "bluesky_app_password_env",
        f"BSKY_HANDLE=releases.acme.io\nBSKY_APP_PASSWORD={s}",
        s,
        "context",
    )
    s = "pina_" + r(100, UPPER)
    add(
        "pinterest_token_marketing_api",
        f"GET https://api.pinterest.com/v5/ad_accounts\nAuthorization: Bearer {s}",
        s,
        "provider",
    )
    s = "IGAA" + r(150, ALNUM + "_")
    add(
        "instagram_token_graph_call",
        f"https://graph.instagram.com/v22.0/me/media?fields=id,caption,media_url&access_token={s}",
        s,
        "provider",
    )
    s = hx(64)
    add(
        "discourse_api_key_headers",
        f"curl -X POST https://forum.acme.io/posts.json -H 'Api-Key: {s}' -H 'Api-Username: system' -F 'raw=Release 4.2 is out'",
        s,
        "context",
    )
    s = r(43, B64URL)
    add(
        "mastodon_access_token_toot",
        f"curl -X POST -H 'Authorization: Bearer {s}' -F 'status=gitvault 0.9 released' https://fosstodon.org/api/v1/statuses",
        s,
        "context",
    )
    s = f"{r(6, ALNUM + '_-')}.{r(6, ALNUM + '_-')}:{r(43, B64URL)}"
    add(
        "ably_api_key_realtime",
        f"const ably = new Ably.Realtime({{ key: '{s}', clientId: 'dashboard' }});",
        s,
        "provider",
    )
    s = "sec-c-" + b64(rbytes(36))
    add(
        "pubnub_secret_key_python",
        f"pnconfig.publish_key = 'pub-c-{uid()}'\npnconfig.subscribe_key = 'sub-c-{uid()}'\npnconfig.secret_key = '{s}'",
        s,
        "provider",
    )
    s = f"cloudinary://{r(15, DIGITS)}:{r(27, B64URL)}@acme-media"
    add("cloudinary_url_env", f"CLOUDINARY_URL={s}", s.split(":")[2].split("@")[0], "context")
    s = "ser." + r(22)
    add(
        "flagsmith_server_key_client",
        f'flagsmith = Flagsmith(environment_key="{s}")',
        s,
        "provider",
    )
    s = f"*:production.{hx(64)}"
    add(
        "unleash_admin_token_header",
        f"curl -H 'Authorization: {s}' https://unleash.acme.io/api/admin/projects",
        s,
        "provider",
    )
    s = "secret-" + r(43)
    add(
        "statsig_server_secret_init",
        f"await Statsig.initialize('{s}', {{ environment: {{ tier: 'production' }} }});",
        s,
        "provider",
    )
    s = "sdk-" + uid()
    add(
        "launchdarkly_server_sdk_key_go",
        f'ldClient, _ := ld.MakeClient("{s}", 5*time.Second)',
        s,
        "provider",
    )
    s = "1/" + hx(40)
    add(
        "transifex_token_tx_config",
        f"[https://app.transifex.com]\nrest_hostname = https://rest.api.transifex.com\ntoken = {s}",
        s,
        "provider",
    )
    s = r(40, ALNUM)
    add(
        "duo_secret_key_authproxy_cfg",
        f"[duo_only_client]\n\n[radius_server_auto]\nikey=DI{r(18, UPPER)}\nskey={s}\napi_host=api-{hx(8)}.duosecurity.com\nradius_ip_1=10.1.4.20",
        s,
        "context",
    )
    s = f"0.{uid()}.{r(30)}:{r(22)}=="
    add(
        "bitwarden_sm_access_token_bws",
        f"export BWS_ACCESS_TOKEN={s}\nbws secret list {uid()}",
        s,
        "provider",
    )
    s = f"st.{uid()}.{hx(32)}.{hx(32)}"
    add(
        "infisical_service_token_run",
        f"infisical run --token={s} --env=prod -- node server.js",
        s,
        "provider",
    )
    s = "A3-" + "-".join(
        (r(6, UPPER), r(6, UPPER), r(5, UPPER), r(5, UPPER), r(5, UPPER), r(5, UPPER))
    )
    add(
        "onepassword_account_secret_key_emergency_kit",
        f"1Password Emergency Kit\nSign-in address: acme.1password.com\nEmail: k.dm@acme.io\nSecret Key: {s}",
        s,
        "provider",
    )
    s = hx(8) + ":" + hx(8)
    add(
        "sidekiq_enterprise_bundle_credentials",
        f"bundle config --local enterprise.contribsys.com {s}\n# same as BUNDLE_ENTERPRISE__CONTRIBSYS__COM",
        s,
        "context",
    )
    s = "fio-u-" + r(64, B64URL)
    add(
        "frameio_dev_token_header",
        f"requests.get('https://api.frame.io/v2/me', headers={{'Authorization': 'Bearer {s}'}})",
        s,
        "provider",
    )
    s = "sm_pat_" + r(16)
    add(
        "settlemint_pat_cli",
        f"settlemint login --personal-access-token {s} --accept-defaults",
        s,
        "provider",
    )
    s = "pscale_oauth_" + r(43, B64URL)
    add(
        "planetscale_oauth_token_pscale_cfg",
        f"# ~/.config/planetscale/access-token\n{s}",
        s,
        "provider",
    )

    section("vendor: private keys and key files")
    s = pem("DSA PRIVATE KEY", 440)
    add(
        "dsa_private_key_legacy_deploy",
        f"ansible-vault view is not set up for this one, sorry:\n{s}",
        s.splitlines()[3],
        "provider",
    )
    d = b64url(rbytes(32))
    jwk = {"kty": "OKP", "crv": "Ed25519", "x": b64url(rbytes(32)), "d": d, "kid": "sig-2026-11"}
    add("jwk_ed25519_private_d", json.dumps({"keys": [jwk]}), d, "context")
    jwk_rsa = {
        "kty": "RSA",
        "kid": "rsa-1",
        "n": b64url(rbytes(256)),
        "e": "AQAB",
        "d": b64url(rbytes(256)),
        "p": b64url(rbytes(128)),
        "q": b64url(rbytes(128)),
        "dp": b64url(rbytes(128)),
        "dq": b64url(rbytes(128)),
        "qi": b64url(rbytes(128)),
    }
    add("jwk_rsa_private_jwks_file", json.dumps(jwk_rsa, indent=1), jwk_rsa["d"], "context")
    s = "RWRTY0Iy" + b64(rbytes(152))[8:]
    add(
        "minisign_secret_key_file",
        f"untrusted comment: minisign encrypted secret key\n{s}",
        s,
        "provider",
    )
    s = pem("ENCRYPTED SIGSTORE PRIVATE KEY", 400)
    add(
        "cosign_private_key_secret_yaml",
        "cosign.key: |\n  " + s.replace("\n", "\n  "),
        s.splitlines()[2],
        "provider",
    )
    s = bech32("nsec", rbytes(32))
    add(
        "nostr_nsec_bot_config",
        f'[bot]\nrelays = ["wss://relay.damus.io", "wss://nos.lol"]\nnsec = "{s}"',
        s,
        "provider",
    )
    keyval = b64(rbytes(40))
    tink = {
        "primaryKeyId": rng.randint(10**8, 10**9),
        "key": [
            {
                "keyData": {
                    "typeUrl": "type.googleapis.com/google.crypto.tink.AesGcmKey",
                    "value": keyval,
                    "keyMaterialType": "SYMMETRIC",
                },
                "status": "ENABLED",
                "keyId": rng.randint(10**8, 10**9),
                "outputPrefixType": "TINK",
            }
        ],
    }
    add("tink_cleartext_keyset_json", json.dumps(tink), keyval, "context")
    s = "RWRCSwAAAA" + b64(rbytes(96))[10:]
    add("signify_secret_key_file", f"untrusted comment: signify secret key\n{s}", s, "provider")
    s = pem("PRIVATE KEY", 100)
    add(
        "app_store_connect_p8_in_fastlane_json",
        json.dumps({"key_id": r(10, UPPER), "issuer_id": uid(), "key": s, "in_house": False}),
        s.splitlines()[1],
        "provider",
    )
    s = b64(rbytes(1200))
    add(
        "android_keystore_base64_gh_secret",
        f"gh secret set ANDROID_KEYSTORE_B64 --body '{s}'",
        s,
        "context",
    )


# ============================================================================ (b) where agents meet them


def agent_tools() -> None:
    section("context: AI coding-agent configs and transcripts")
    s = "sk-ant-api03-" + r(93, B64URL) + "AA"
    add(
        "codex_config_toml_mcp_env",
        f'[mcp_servers.docs]\ncommand = "npx"\nargs = ["-y", "@acme/docs-mcp"]\n\n[mcp_servers.docs.env]\nANTHROPIC_API_KEY = "{s}"',
        s,
        "provider",
    )
    s = openai_proj()
    add(
        "gemini_settings_json_mcp_env",
        json.dumps(
            {
                "theme": "GitHub",
                "mcpServers": {
                    "openai-tools": {
                        "command": "uvx",
                        "args": ["openai-mcp"],
                        "env": {"OPENAI_API_KEY": s},
                    }
                },
            },
            indent=2,
        ),
        s,
        "provider",
    )
    s = crc_token("ghp_", 30)
    add(
        "vscode_mcp_json_hardcoded_header",
        json.dumps(
            {
                "servers": {
                    "github": {
                        "type": "http",
                        "url": "https://api.githubcopilot.com/mcp/",
                        "headers": {"Authorization": f"Bearer {s}"},
                    }
                }
            },
            indent=2,
        ),
        s,
        "provider",
    )
    s = "lin_api_" + r(40)
    add(
        "cursor_mcp_json_args_token",
        json.dumps(
            {
                "mcpServers": {
                    "linear": {"command": "npx", "args": ["-y", "linear-mcp", "--token", s]}
                }
            }
        ),
        s,
        "provider",
    )
    s = r(40, B64URL)
    add(
        "claude_mcp_add_env_flag",
        f"claude mcp add --transport stdio jira --env JIRA_URL=https://acme.atlassian.net --env JIRA_API_TOKEN={s} -- uvx mcp-atlassian",
        s,
        "context",
    )
    s = "AIza" + r(35, B64URL)
    add(
        "gemini_mcp_add_e_flag",
        f"gemini mcp add -e GOOGLE_MAPS_API_KEY={s} maps npx -y @acme/maps-mcp",
        s,
        "provider",
    )
    s = "sk-" + r(48)
    add(
        "litellm_proxy_master_key_yaml",
        f"model_list:\n  - model_name: claude-sonnet\n    litellm_params:\n      model: anthropic/claude-sonnet-4-5\n      api_key: os.environ/ANTHROPIC_API_KEY\ngeneral_settings:\n  master_key: {s}",
        s,
        "context",
    )
    s = "sk-or-v1-" + hx(64)
    add(
        "open_webui_openai_keys_list",
        f"OPENAI_API_BASE_URLS=https://api.openai.com/v1;https://openrouter.ai/api/v1\nOPENAI_API_KEYS=sk-placeholder-unused;{s}",
        s,
        "provider",
    )
    s = r(32)
    add(
        "vllm_serve_api_key_flag",
        f"vllm serve Qwen/Qwen3-Coder-30B-A3B-Instruct --port 8000 --api-key {s} --max-model-len 65536",
        s,
        "context",
    )
    s = "xai-" + r(80)
    add(
        "continue_config_yaml_api_key",
        f"name: acme-assistant\nversion: 1.0.0\nmodels:\n  - name: grok\n    provider: xai\n    model: grok-4\n    apiKey: {s}",
        s,
        "provider",
    )
    s = "gsk_" + r(52)
    add(
        "aider_chat_history_markdown",
        f"#### /run export GROQ_API_KEY={s} && aider --model groq/llama-3.3-70b\n\n> Add 0.3k tokens of command output to the chat? (Y)es/(N)o [Yes]: n",
        s,
        "provider",
    )
    s = "sk-ant-api03-" + r(93, B64URL) + "AA"
    tool = {
        "type": "tool_result",
        "tool_use_id": "toolu_" + r(24),
        "content": f"HOME=/home/kdm\nANTHROPIC_API_KEY={s}\nPATH=/usr/local/bin:/usr/bin",
    }
    add(
        "claude_code_jsonl_tool_result_env",
        json.dumps(
            {
                "type": "user",
                "message": {"role": "user", "content": [tool]},
                "uuid": uid(),
                "timestamp": "2026-12-02T09:14:03.112Z",
            }
        ),
        s,
        "provider",
    )
    s = pw(18)
    rollout = {
        "type": "response_item",
        "payload": {
            "type": "function_call",
            "name": "shell",
            "arguments": json.dumps(
                {
                    "command": [
                        "bash",
                        "-lc",
                        f"PGPASSWORD='{s}' psql -h db.internal -U app -c 'select 1'",
                    ]
                }
            ),
        },
    }
    add("codex_rollout_jsonl_function_call", json.dumps(rollout), s, "context")
    s = "npm_" + crc_token("", 30)
    add(
        "agent_memory_file_instruction",
        f"# CLAUDE.md\n\n## Publishing\n- Publish with `npm publish --access public`; the automation token is {s} (don't ask me again).",
        s,
        "provider",
    )
    s = pw(14, "!#%*+-")
    add(
        "cline_mcp_settings_env_password",
        json.dumps(
            {
                "mcpServers": {
                    "postgres": {
                        "command": "npx",
                        "args": [
                            "-y",
                            "@modelcontextprotocol/server-postgres",
                            "postgresql://readonly@db.acme.io/analytics",
                        ],
                        "env": {"PGPASSWORD": s},
                        "disabled": False,
                    }
                }
            },
            indent=2,
        ),
        s,
        "context",
    )
    s = "ntn_" + r(11, DIGITS) + r(35)
    add(
        "goose_config_yaml_extension_env",
        f"extensions:\n  notion:\n    enabled: true\n    type: stdio\n    cmd: npx\n    args: [-y, '@notionhq/notion-mcp-server']\n    envs:\n      NOTION_TOKEN: {s}",
        s,
        "provider",
    )
    s = r(32, B32L.upper())
    add(
        "user_prompt_paste_otp_seed",
        f"> can you wire TOTP into the admin login? for testing use the seed {s} (it's the one on my phone) and check codes against it",
        s,
        "context",
    )
    s = pw(20)
    add(
        "agent_plan_step_with_password",
        f"Plan:\n1. ssh deploy@10.0.4.12 (password {s})\n2. restart the worker\n3. tail the logs",
        s,
        "context",
    )


def configs() -> None:
    section("context: config files of many formats")
    s = pw(16)
    add(
        "hocon_play_application_conf",
        f'db.default {{\n  driver = org.postgresql.Driver\n  url = "jdbc:postgresql://db:5432/shop"\n  username = shop\n  password = "{s}"\n}}',
        s,
        "context",
    )
    s = pw(16)
    add(
        "cue_config_value",
        f'package deploy\n\ndatabase: {{\n\thost:     "pg.internal"\n\tuser:     "svc_orders"\n\tpassword: "{s}"\n}}',
        s,
        "context",
    )
    s = pw(16)
    add(
        "pkl_config_value",
        f'amends "package://pkg.pkl-lang.org/acme/base@1.4.0#/Service.pkl"\n\ndatabase {{\n  username = "svc"\n  password = "{s}"\n}}',
        s,
        "context",
    )
    s = pw(16)
    add(
        "jsonnet_local_secret",
        f"local dbPassword = '{s}';\n{{\n  apiVersion: 'v1',\n  kind: 'ConfigMap',\n  data: {{ DATABASE_URL: 'postgres://app:%s@pg:5432/app' % dbPassword }},\n}}",
        s,
        "context",
    )
    s = pw(16)
    add(
        "kdl_config_node",
        f'server "api" {{\n    listen "0.0.0.0:8443"\n    database user="api" password="{s}" host="pg.internal"\n}}',
        s,
        "context",
    )
    s = pw(16)
    add(
        "edn_clojure_config",
        f'{{:db {{:dbtype "postgresql" :dbname "ledger" :user "ledger" :password "{s}"}}\n :port 8080}}',
        s,
        "context",
    )
    s = pw(16)
    add(
        "erlang_sys_config",
        f'[{{pgo, [{{pools, [{{default, #{{pool_size => 10, host => "pg", user => "rabbit", password => "{s}"}}}}]}}]}}].',
        s,
        "context",
    )
    s = pw(16)
    add(
        "elixir_runtime_exs_literal",
        f'config :acme, Acme.Repo,\n  username: "acme",\n  password: "{s}",\n  hostname: "db.prod.internal",\n  pool_size: 15',
        s,
        "context",
    )
    s = pw(16)
    add(
        "nix_module_initial_password",
        f'users.users.deploy = {{\n  isNormalUser = true;\n  extraGroups = [ "wheel" ];\n  initialPassword = "{s}";\n}};',
        s,
        "context",
    )
    s = pw(16)
    add(
        "starlark_bazelrc_remote_header",
        f"build:remote --remote_cache=grpcs://remote.buildbuddy.io\nbuild:remote --remote_header=x-buildbuddy-api-key={s}",
        s,
        "context",
    )
    s = r(40, B64URL)
    add("develocity_access_key_env", f"DEVELOCITY_ACCESS_KEY=ge.acme.io={s}", s, "context")
    s = pw(16)
    add(
        "lua_neovim_plugin_setup",
        f"require('gp').setup({{\n  providers = {{\n    ollama = {{ endpoint = 'https://llm.acme.io/v1/chat/completions', secret = '{s}' }},\n  }},\n}})",
        s,
        "context",
    )
    s = pw(16)
    add(
        "groovy_grails_datasource",
        f"dataSource {{\n    dbCreate = 'validate'\n    url = 'jdbc:mysql://db/grails'\n    username = 'grails'\n    password = '{s}'\n}}",
        s,
        "context",
    )
    s = pw(16)
    add(
        "kong_declarative_keyauth",
        f'_format_version: "3.0"\nconsumers:\n  - username: partner-a\n    keyauth_credentials:\n      - key: {s}',
        s,
        "context",
    )
    s = r(32)
    add(
        "apisix_admin_key_config",
        f"deployment:\n  admin:\n    admin_key:\n      - name: admin\n        key: {s}\n        role: admin",
        s,
        "context",
    )
    s = pw(16)
    add(
        "envoy_basic_auth_htpasswd_inline",
        f'- name: envoy.filters.http.basic_auth\n  typed_config:\n    users:\n      inline_string: "ops:{{SHA}}{b64(rbytes(20))}"\n# ops password for the dashboard: {s}',
        s,
        "context",
    )
    s = pw(16)
    add(
        "spring_security_noop_password",
        f"spring.security.user.name=actuator\nspring.security.user.password={{noop}}{s}",
        s,
        "context",
    )
    s = pw(16)
    add(
        "jetbrains_http_client_private_env",
        json.dumps(
            {"prod": {"host": "https://api.acme.io", "username": "qa-bot", "password": s}}, indent=2
        ),
        s,
        "context",
    )
    s = jwt({"sub": "qa-bot", "scope": "orders:write", "exp": 1796197200}, alg="RS256")
    add(
        "rest_client_http_file_variable",
        f"@host = https://api.acme.io\n@token = {s}\n\n### list orders\nGET {{{{host}}}}/v1/orders\nAuthorization: Bearer {{{{token}}}}",
        s,
        "provider",
    )
    s = pw(18)
    postman = {
        "id": uid(),
        "name": "prod",
        "values": [
            {"key": "baseUrl", "value": "https://api.acme.io", "enabled": True},
            {"key": "adminPassword", "value": s, "type": "secret", "enabled": True},
        ],
        "_postman_variable_scope": "environment",
    }
    add("postman_environment_export", json.dumps(postman, indent=2), s, "context")
    s = r(40, B64URL)
    add(
        "bruno_env_file",
        f"vars {{\n  baseUrl: https://api.acme.io\n}}\nvars:secret [\n  apiKey\n]\n# apiKey locally: {s}",
        s,
        "context",
    )
    s = r(48, B64URL)
    add(
        "insomnia_export_yaml_header",
        f"  - _id: req_{hx(32)}\n    name: Create invoice\n    method: POST\n    headers:\n      - name: X-Api-Key\n        value: {s}",
        s,
        "context",
    )
    s = jwt({"sid": uid(), "uid": 8812, "exp": 1796197200})
    state = {
        "cookies": [],
        "origins": [
            {"origin": "https://app.acme.io", "localStorage": [{"name": "auth_token", "value": s}]}
        ],
    }
    add("playwright_storage_state_json", json.dumps(state), s, "provider")
    s = pw(16)
    add(
        "cypress_env_json",
        json.dumps({"ADMIN_EMAIL": "qa+admin@acme.io", "ADMIN_PASSWORD": s}, indent=2),
        s,
        "context",
    )
    s = pw(16)
    add(
        "jmeter_jmx_header_manager",
        f'<elementProp name="" elementType="Header">\n  <stringProp name="Header.name">X-Api-Key</stringProp>\n  <stringProp name="Header.value">{s}</stringProp>\n</elementProp>',
        s,
        "context",
    )
    s = pw(16)
    add(
        "robot_framework_variables",
        f"*** Variables ***\n${{BASE_URL}}      https://staging.acme.io\n${{ADMIN_USER}}    admin\n${{ADMIN_PASS}}    {s}",
        s,
        "context",
    )
    s = pw(16)
    add(
        "fish_variables_universal_export",
        f"# This file contains fish universal variable definitions.\nSETUVAR --export OPENAI_ORG:org\\x2dacme\nSETUVAR --export DB_PASSWORD:{s}",
        s,
        "context",
    )
    s = pw(16, "")
    add(
        "windows_reg_export_proxy_password",
        f'Windows Registry Editor Version 5.00\n\n[HKEY_CURRENT_USER\\Software\\SimonTatham\\PuTTY\\Sessions\\bastion]\n"ProxyUsername"="kdm"\n"ProxyPassword"="{s}"',
        s,
        "context",
    )
    s = pw(16)
    add(
        "muttrc_imap_pass",
        f'set imap_user = "kdm@acme.io"\nset imap_pass = "{s}"\nset folder = "imaps://imap.fastmail.com:993"',
        s,
        "context",
    )
    s = pw(16)
    add(
        "msmtprc_password",
        f"account acme\nhost smtp.acme.io\nport 587\nauth on\nuser alerts@acme.io\npassword {s}\ntls on",
        s,
        "context",
    )
    s = pw(16)
    add(
        "mbsyncrc_pass",
        f"IMAPAccount work\nHost outlook.office365.com\nUser kdm@acme.io\nPass {s}\nSSLType IMAPS",
        s,
        "context",
    )
    s = pw(16, "")
    add(
        "offlineimaprc_remotepass",
        f"[Repository Remote]\ntype = IMAP\nremotehost = imap.acme.io\nremoteuser = kdm\nremotepass = {s}",
        s,
        "context",
    )
    s = pw(16)
    add(
        "fetchmailrc_poll",
        f'poll pop.acme.io protocol POP3 user "kdm" there with password "{s}" is kdm here',
        s,
        "context",
    )
    s = pw(16)
    add(
        "irssi_config_sasl",
        f'servers = (\n  {{ address = "irc.libera.chat"; chatnet = "liberachat"; port = "6697"; use_tls = "yes"; sasl_username = "kdm"; sasl_password = "{s}"; sasl_mechanism = "PLAIN"; }}\n);',
        s,
        "context",
    )
    s = pw(16)
    add(
        "znc_conf_pass_plain",
        f"<User kdm>\n    Pass = plain#{s}\n    Nick = kdm\n</User>",
        s,
        "context",
    )
    s = pw(16)
    add(
        "s3fs_passwd_file",
        f"$ cat ~/.passwd-s3fs\nAKIA{r(16, AWS32)}:{r(40, B64)}\n$ cat /etc/passwd-s3fs.minio\nminio-admin:{s}",
        s,
        "context",
    )
    s = pw(16)
    add(
        "cifs_credentials_file",
        f"# /root/.smbcredentials\nusername=svc_backup\npassword={s}\ndomain=ACME",
        s,
        "context",
    )
    s = pw(16, "!#%*+-.")
    add(
        "fstab_cifs_password_option",
        f"//nas.acme.lan/media  /mnt/media  cifs  username=media,password={s},uid=1000,vers=3.0  0  0",
        s,
        "context",
    )
    s = pw(16)
    add(
        "davfs2_secrets_line",
        f'# /etc/davfs2/secrets\nhttps://cloud.acme.io/remote.php/dav/files/kdm  kdm  "{s}"',
        s,
        "context",
    )
    s = pw(16)
    add(
        "slapd_conf_rootpw_plain",
        f'database  mdb\nsuffix    "dc=acme,dc=io"\nrootdn    "cn=admin,dc=acme,dc=io"\nrootpw    {s}',
        s,
        "context",
    )
    s = pw(16)
    add(
        "sssd_conf_default_authtok",
        f"[domain/acme.io]\nid_provider = ldap\nldap_uri = ldaps://ldap.acme.io\nldap_default_bind_dn = cn=sssd,ou=svc,dc=acme,dc=io\nldap_default_authtok = {s}",
        s,
        "context",
    )
    s = pw(16)
    add(
        "postfix_sasl_passwd",
        f"# /etc/postfix/sasl_passwd\n[smtp.sendgrid.net]:587 apikey:SG.{r(22, B64URL)}.{r(43, B64URL)}\n[smtp.acme.io]:587 relay@acme.io:{s}",
        s,
        "context",
    )
    s = pw(16)
    add(
        "dovecot_passwd_file_plain",
        f"kdm@acme.io:{{PLAIN}}{s}:5000:5000::/var/vmail/acme.io/kdm",
        s,
        "context",
    )
    s = pw(14, "")
    add(
        "asterisk_sip_conf_secret",
        f"[1001]\ntype=friend\ncontext=office\nhost=dynamic\nsecret={s}\ndisallow=all\nallow=ulaw",
        s,
        "context",
    )
    s = pw(14, "")
    add(
        "squid_cache_peer_login",
        f"cache_peer proxy.upstream.net parent 3128 0 no-query default login=acme:{s}",
        s,
        "context",
    )
    s = pw(14, "")
    add(
        "radius_clients_conf_secret",
        f"client vpn-gw {{\n    ipaddr = 10.8.0.1\n    secret = {s}\n    shortname = vpn\n}}",
        s,
        "context",
    )
    s = pw(14, "")
    add(
        "snmpd_conf_v3_authpass",
        f'createUser monitor SHA "{s}" AES "{pw(14, "")}"\nrouser monitor priv',
        s,
        "context",
    )
    s = pw(8, "")
    add(
        "keepalived_auth_pass",
        f"vrrp_instance VI_1 {{\n    state MASTER\n    interface eth0\n    virtual_router_id 51\n    authentication {{\n        auth_type PASS\n        auth_pass {s}\n    }}\n}}",
        s,
        "context",
    )
    s = pw(14, "")
    add(
        "frr_bgp_neighbor_password",
        f"router bgp 65010\n neighbor 192.0.2.1 remote-as 65020\n neighbor 192.0.2.1 password {s}",
        s,
        "context",
    )
    s = pw(16)
    add(
        "hostapd_wpa_passphrase",
        f"interface=wlan0\nssid=acme-guest\nwpa=2\nwpa_key_mgmt=WPA-PSK\nwpa_passphrase={s}",
        s,
        "context",
    )
    s = pw(16)
    add("wifi_qr_payload", f"WIFI:T:WPA;S:Acme Office 5G;P:{s};H:false;;", s, "context")
    s = pw(16)
    add(
        "gradle_signing_configs_store_password",
        f'signingConfigs {{\n    release {{\n        storeFile file("release.jks")\n        storePassword "{s}"\n        keyAlias "upload"\n        keyPassword "{s}"\n    }}\n}}',
        s,
        "context",
    )
    s = "-".join(r(4, string.ascii_lowercase) for _ in range(4))
    add(
        "fastlane_app_specific_password_env",
        f"FASTLANE_USER=release@acme.io\nFASTLANE_APPLE_APPLICATION_SPECIFIC_PASSWORD={s}\nMATCH_PASSWORD={pw(16)}",
        s,
        "context",
    )
    section("context: CI, IaC, Terraform state, kubeconfigs")
    s = pw(16)
    add(
        "bicepparam_admin_password",
        f"using './main.bicep'\n\nparam location = 'westeurope'\nparam adminUsername = 'azureuser'\nparam adminPassword = '{s}'",
        s,
        "context",
    )
    s = pw(16)
    add(
        "cloudformation_parameters_json",
        json.dumps(
            [
                {"ParameterKey": "DBUsername", "ParameterValue": "admin"},
                {"ParameterKey": "DBPassword", "ParameterValue": s},
            ],
            indent=2,
        ),
        s,
        "context",
    )
    s = pw(16)
    add(
        "serverless_yml_provider_env",
        f"provider:\n  name: aws\n  runtime: nodejs22.x\n  environment:\n    STAGE: prod\n    DB_PASS: {s}",
        s,
        "context",
    )
    s = pw(16)
    add(
        "taskfile_yml_env",
        f"version: '3'\nenv:\n  REGISTRY_USER: ci\n  REGISTRY_PASS: {s}\ntasks:\n  push:\n    cmds: [docker push registry.acme.io/api:latest]",
        s,
        "context",
    )
    s = pw(16)
    add(
        "travis_yml_env_global_plain",
        f"language: python\nenv:\n  global:\n    - PYPI_USER=acme\n    - PYPI_PASS={s}",
        s,
        "context",
    )
    s = pw(16)
    add(
        "drone_yml_environment",
        f"kind: pipeline\nname: deploy\nsteps:\n  - name: migrate\n    image: migrate/migrate\n    environment:\n      DATABASE_PASSWORD: {s}",
        s,
        "context",
    )
    s = r(40, B64URL)
    add(
        "buildkite_pipeline_env",
        f'env:\n  ARTIFACTORY_API_KEY: "{s}"\nsteps:\n  - command: make publish',
        s,
        "context",
    )
    s = pw(16)
    add(
        "bitrise_yml_envs",
        f"app:\n  envs:\n  - BITRISE_PROJECT_PATH: Acme.xcworkspace\n  - KEYCHAIN_PASSWORD: {s}\n    opts:\n      is_expand: false",
        s,
        "context",
    )
    s = pw(16)
    add(
        "codemagic_yaml_vars",
        f"workflows:\n  ios-release:\n    environment:\n      vars:\n        APP_STORE_CONNECT_PASSWORD: {s}\n        BUNDLE_ID: io.acme.app",
        s,
        "context",
    )
    s = pw(16)
    add(
        "concourse_vars_file",
        f"# credentials.yml for fly set-pipeline -l\ngit-uri: git@github.com:acme/infra.git\nregistry-username: concourse\nregistry-password: {s}",
        s,
        "context",
    )
    s = pw(16)
    add(
        "argo_workflow_parameter_value",
        f'spec:\n  arguments:\n    parameters:\n      - name: db-password\n        value: "{s}"',
        s,
        "context",
    )
    s = pw(16)
    add(
        "teamcity_settings_kts_param",
        f'params {{\n    param("env.DEPLOY_USER", "teamcity")\n    param("env.DEPLOY_PASSWORD", "{s}")\n}}',
        s,
        "context",
    )
    s = pw(16)
    add(
        "earthfile_build_arg",
        f"VERSION 0.8\ndeploy:\n    FROM alpine:3.20\n    ARG REGISTRY_PASSWORD={s}\n    RUN --push ./push.sh",
        s,
        "context",
    )
    s = pw(16)
    add(
        "docker_build_arg_cli",
        f"docker build --build-arg NPM_TOKEN=npm_unused --build-arg SENTRY_AUTH_PASSWORD={s} -t acme/web:4.2.0 .",
        s,
        "context",
    )
    s = pw(16)
    add(
        "skopeo_dest_creds",
        f"skopeo copy docker://docker.io/library/nginx:1.27 docker://registry.acme.io/mirror/nginx:1.27 --dest-creds mirror:{s}",
        s,
        "context",
    )
    s = pw(16)
    add(
        "flux_create_secret_git",
        f"flux create secret git infra-auth --url=https://git.acme.io/ops/infra --username=flux --password={s}",
        s,
        "context",
    )
    s = pw(16)
    add(
        "kubectl_docker_registry_secret",
        f"kubectl create secret docker-registry regcred --docker-server=registry.acme.io --docker-username=puller --docker-password={s} -n apps",
        s,
        "context",
    )
    s = b64(pem("RSA PRIVATE KEY", 900))
    kc = f"users:\n- name: admin@prod\n  user:\n    client-certificate-data: {b64(pem('CERTIFICATE', 500))}\n    client-key-data: {s}"
    add("kubeconfig_client_key_data", kc, s, "provider")
    s = "1//0" + r(99, B64URL)
    add(
        "kubeconfig_oidc_refresh_token",
        f"users:\n- name: oidc\n  user:\n    auth-provider:\n      name: oidc\n      config:\n        client-id: kubernetes\n        idp-issuer-url: https://accounts.google.com\n        refresh-token: {s}",
        s,
        "provider",
    )
    attrs = {"id": "none", "length": 24, "result": pw(24), "special": True}
    state = {
        "version": 4,
        "terraform_version": "1.9.8",
        "resources": [
            {
                "mode": "managed",
                "type": "random_password",
                "name": "db",
                "instances": [
                    {
                        "schema_version": 3,
                        "attributes": attrs,
                        "sensitive_attributes": [[{"type": "get_attr", "value": "result"}]],
                    }
                ],
            }
        ],
    }
    add(
        "terraform_state_random_password_result",
        json.dumps(state, indent=2),
        str(attrs["result"]),
        "context",
    )
    sec = r(40, B64)
    state2 = {
        "type": "aws_iam_access_key",
        "name": "ci",
        "instances": [
            {
                "attributes": {
                    "id": "AKIA" + r(16, AWS32),
                    "secret": sec,
                    "status": "Active",
                    "user": "ci-deployer",
                }
            }
        ],
    }
    add("terraform_state_iam_access_key_secret", json.dumps(state2), sec, "context")
    key_pem = pem("RSA PRIVATE KEY", 600)
    state3 = {
        "type": "tls_private_key",
        "name": "deploy",
        "instances": [
            {
                "attributes": {
                    "algorithm": "RSA",
                    "private_key_pem": key_pem + "\n",
                    "public_key_fingerprint_md5": ":".join(hx(2) for _ in range(16)),
                }
            }
        ],
    }
    add(
        "terraform_state_tls_private_key_escaped",
        json.dumps(state3),
        key_pem.splitlines()[2],
        "provider",
    )
    s = f"{r(14)}.atlasv1.{r(67, ALNUM)}"
    add(
        "terraformrc_hcl_credentials",
        f'credentials "app.terraform.io" {{\n  token = "{s}"\n}}',
        s,
        "provider",
    )


def netrc_likes() -> None:
    section("context: netrc-likes and tool credential files")
    s = pw(16)
    add(
        "hgrc_auth_section",
        f"[auth]\nacme.prefix = https://hg.acme.io/\nacme.username = kdm\nacme.password = {s}",
        s,
        "context",
    )
    s = pw(16, "")
    add(
        "svn_simple_auth_cache",
        f"K 8\npassword\nV {len(s)}\n{s}\nK 15\nsvn:realmstring\nV 41\n<https://svn.acme.io:443> Acme Subversion\nK 8\nusername\nV 3\nkdm\nEND",
        s,
        "context",
    )
    s = pw(16)
    add(
        "wgetrc_password",
        f"# ~/.wgetrc\nhttp_user = mirror\nhttp_password = {s}\ntries = 3",
        s,
        "context",
    )
    s = pw(16)
    add("curlrc_user", f'# ~/.curlrc\nuser = "ops:{s}"\nsilent\nshow-error', s, "context")
    s = pw(16)
    add(
        "snowsql_config",
        f"[connections.prod]\naccountname = acme-xy12345\nusername = ANALYST\npassword = {s}\nwarehousename = BI_WH",
        s,
        "context",
    )
    s = r(40, B64URL)
    add(
        "condarc_channel_token_url",
        f"channels:\n  - https://conda.acme.io/t/{s}/internal\n  - conda-forge",
        s,
        "context",
    )
    s = pw(16)
    add(
        "uv_index_password_env",
        f"UV_INDEX_ACME_USERNAME=ci\nUV_INDEX_ACME_PASSWORD={s}\nuv sync --locked",
        s,
        "context",
    )
    s = r(32)
    add(
        "deno_auth_tokens_env",
        f"DENO_AUTH_TOKENS={s}@deno.acme.io;{r(32)}@raw.githubusercontent.com deno run -A main.ts",
        s,
        "context",
    )
    s = "npm_" + crc_token("", 30)
    add(
        "bunfig_toml_scope_token",
        f'[install.scopes]\n"@acme" = {{ token = "{s}", url = "https://registry.npmjs.org/" }}',
        s,
        "provider",
    )
    s = pw(16)
    add(
        "hatch_index_auth_env",
        f"HATCH_INDEX_USER=__token__ HATCH_INDEX_AUTH={s} hatch publish -r https://pypi.acme.io/simple",
        s,
        "context",
    )
    s = pw(16)
    add(
        "twine_password_env",
        f"TWINE_USERNAME=acme TWINE_PASSWORD={s} twine upload --repository-url https://nexus.acme.io/repository/pypi/ dist/*",
        s,
        "context",
    )
    s = pw(16)
    add(
        "bundler_gems_host_credentials",
        f"BUNDLE_GEMS__ACME__IO=ci:{s} bundle install",
        s,
        "context",
    )
    s = hx(32)
    add("mix_hex_org_key", f"mix hex.organization auth acme --key {s}", s, "context")
    s = r(43, B64URL)
    add(
        "dart_pub_token_add_stdin",
        f"echo {s} | dart pub token add https://pub.acme.io --env-var=ACME_PUB_TOKEN",
        s,
        "context",
    )
    s = r(40, B64URL)
    add(
        "cargo_login_positional",
        f"$ cargo login --registry acme {s}\n       Login token for `acme` saved",
        s,
        "context",
    )
    s = pw(16)
    add(
        "dotnet_nuget_add_source_password",
        f"dotnet nuget add source https://nuget.acme.io/v3/index.json -n acme -u ci -p {s} --store-password-in-clear-text",
        s,
        "context",
    )
    s = pw(16)
    add(
        "helm_registry_login_password",
        f"helm registry login registry.acme.io --username robot --password {s}",
        s,
        "context",
    )
    s = f"robot$ci+push:{r(32)}"
    add(
        "harbor_robot_account_docker_login",
        f"echo '{s.split(':')[1]}' | docker login harbor.acme.io -u 'robot$ci+push' --password-stdin",
        s.split(":")[1],
        "context",
    )
    s = pw(16)
    add(
        "vault_kv_put_password",
        f"vault kv put -mount=secret apps/billing db_user=billing db_password={s}",
        s,
        "context",
    )
    s = pw(16)
    add(
        "aws_secretsmanager_secret_string",
        f'aws secretsmanager create-secret --name prod/billing/db --secret-string \'{{"username":"billing","password":"{s}"}}\'',
        s,
        "context",
    )
    s = pw(16)
    add(
        "az_keyvault_secret_set_value",
        f"az keyvault secret set --vault-name acme-kv --name SqlAdminPassword --value '{s}'",
        s,
        "context",
    )
    s = pw(16)
    add(
        "doppler_secrets_set_inline",
        f"doppler secrets set STRIPE_WEBHOOK_PASSWORD='{s}' --project billing --config prd",
        s,
        "context",
    )
    s = pw(16)
    add(
        "op_item_create_assignment",
        f"op item create --category=login --title='Staging DB' --vault=Ops username=app 'password={s}'",
        s,
        "context",
    )
    s = pw(16)
    add(
        "macos_security_add_generic_password",
        f"security add-generic-password -a kdm -s acme-vpn -w '{s}' -U",
        s,
        "context",
    )
    s = "sk_live_" + r(99)
    add(
        "firebase_functions_config_set",
        f'firebase functions:config:set stripe.secret="{s}" --project acme-prod',
        s,
        "provider",
    )
    s = pw(16)
    add(
        "xcrun_notarytool_password",
        f"xcrun notarytool submit Acme.zip --apple-id release@acme.io --team-id {r(10, UPPER)} --password {s} --wait",
        s,
        "context",
    )
    s = pw(16)
    add(
        "apksigner_ks_pass",
        f"apksigner sign --ks release.jks --ks-key-alias upload --ks-pass pass:{s} app-release-unsigned.apk",
        s,
        "context",
    )
    s = pw(16)
    add(
        "jarsigner_storepass",
        f"jarsigner -keystore acme.jks -storepass {s} -tsa http://timestamp.digicert.com build/libs/acme.jar acme",
        s,
        "context",
    )


def commands() -> None:
    section("context: CLI invocations and shell history")
    s = pw(16)
    add(
        "xfreerdp_p_flag",
        f"xfreerdp /v:ts01.acme.lan /u:ACME\\\\kdm /p:'{s}' /dynamic-resolution +clipboard",
        s,
        "context",
    )
    s = pw(16, "!#%*+-")
    add(
        "ipmitool_P_flag",
        f"ipmitool -I lanplus -H 10.20.0.15 -U ADMIN -P '{s}' chassis power cycle",
        s,
        "context",
    )
    s = pw(16, "")
    add(
        "snmpwalk_v3_auth_priv",
        f"snmpwalk -v3 -l authPriv -u monitor -a SHA -A {s} -x AES -X {pw(16, '')} 10.0.0.1 sysDescr",
        s,
        "context",
    )
    s = pw(16)
    add(
        "mount_cifs_password_option",
        f"sudo mount -t cifs //fs01/share /mnt/share -o username=backup,password='{s}',vers=3.1.1",
        s,
        "context",
    )
    s = pw(16)
    add(
        "nmcli_wifi_connect_password",
        f"nmcli device wifi connect 'Acme-Lab' password '{s}' ifname wlp2s0",
        s,
        "context",
    )
    s = pw(16, "")
    add(
        "net_user_add_windows",
        f"C:\\> net user svc_sql {s} /add /passwordchg:no /expires:never",
        s,
        "context",
    )
    s = pw(16)
    add(
        "psexec_p_flag",
        f'PsExec64.exe \\\\app02 -u ACME\\deploy -p {s} -h cmd /c "iisreset"',
        s,
        "context",
    )
    s = pw(16)
    add(
        "wmic_password_switch",
        f'wmic /node:db03 /user:ACME\\\\ops /password:{s} process call create "cmd.exe /c net stop MSSQLSERVER"',
        s,
        "context",
    )
    s = pw(16)
    add(
        "clickhouse_client_password",
        f"clickhouse-client --host ch.acme.io --secure --user analyst --password '{s}' --query 'SELECT count() FROM events'",
        s,
        "context",
    )
    s = pw(16)
    add(
        "cqlsh_u_p",
        f"cqlsh cass01.acme.io 9042 -u cassandra -p '{s}' --ssl -e 'DESCRIBE KEYSPACES'",
        s,
        "context",
    )
    s = pw(14, "")
    add("db2_connect_using", f"db2 connect to SAMPLE user db2inst1 using {s}", s, "context")
    s = pw(14, "")
    add(
        "oracle_expdp_userid",
        f"expdp system/{s}@ORCLPDB1 schemas=HR directory=DATA_PUMP_DIR dumpfile=hr.dmp",
        s,
        "context",
    )
    s = pw(14, "")
    add("unixodbc_isql_positional", f"isql -v MSSQL_PROD sa {s}", s, "context")
    s = pw(16)
    add(
        "mysqlsh_password_eq",
        f"mysqlsh --uri root@mysql-0.acme:3306 --password='{s}' --sql -e 'SHOW REPLICAS'",
        s,
        "context",
    )
    s = pw(16)
    add(
        "kinit_echo_pipe",
        f"echo '{s}' | kinit svc_hadoop@ACME.IO && hdfs dfs -ls /warehouse",
        s,
        "context",
    )
    s = pw(16)
    add(
        "aria2c_http_passwd",
        f"aria2c --http-user=mirror --http-passwd='{s}' -x 8 https://dl.acme.io/images/base-2026.12.qcow2",
        s,
        "context",
    )
    s = r(40, B64URL)
    add(
        "curl_oauth2_bearer_flag",
        f"curl --oauth2-bearer {s} https://api.acme.io/v2/me",
        s,
        "context",
    )
    s = "glpat-" + r(20, B64URL)
    add(
        "curl_private_token_header_history",
        f'  512  curl --header "PRIVATE-TOKEN: {s}" "https://gitlab.acme.io/api/v4/projects?membership=true"',
        s,
        "provider",
    )
    s = pw(16)
    add(
        "hg_clone_userinfo_url", f"hg clone https://kdm:{s}@hg.acme.io/legacy/billing", s, "context"
    )
    s = pw(16)
    add(
        "lftp_u_user_comma_pass",
        f"lftp -u deploy,'{s}' -e 'mirror -R dist/ /htdocs; bye' ftp.acme-hosting.net",
        s,
        "context",
    )
    s = pw(16)
    add("rar_hp_switch", f"rar a -hp{s} -m5 backups/db-2026-12-01.rar dumps/", s, "context")
    s = pw(16)
    add("unzip_P_flag", f"unzip -P '{s}' customer-export-2026-11.zip -d /tmp/export", s, "context")
    s = pw(16)
    add(
        "gpg_symmetric_passphrase_fd",
        f"gpg --batch --yes --passphrase-fd 0 --symmetric backup.tar <<< '{s}'",
        s,
        "context",
    )
    s = pw(16)
    add(
        "bash_history_with_timestamps",
        f"#1764660512\ncd ~/src/billing\n#1764660520\nexport DB_PASSWORD='{s}'\n#1764660533\n./manage.py migrate",
        s,
        "context",
    )
    s = pw(16, "")
    add(
        "mysql_history_octal_spaces",
        f"_HiStOrY_V2_\nSHOW\\040DATABASES;\nCREATE\\040USER\\040'report'@'%'\\040IDENTIFIED\\040BY\\040'{s}';",
        s,
        "context",
    )
    s = pw(16)
    add(
        "psql_history_password_command",
        f"\\c billing\nALTER ROLE reporting WITH LOGIN PASSWORD '{s}' VALID UNTIL '2027-01-01';\n\\q",
        s,
        "context",
    )
    s = pw(16)
    add(
        "powershell_psreadline_history",
        f"Connect-AzAccount -ServicePrincipal -Tenant {uid()}\n$pw = '{s}'\nInvoke-Sqlcmd -ServerInstance sql01 -Username sa -Password $pw -Query 'SELECT @@VERSION'",
        s,
        "context",
    )
    s = pw(16)
    add(
        "python_repl_history",
        f"import paramiko\nc = paramiko.SSHClient()\nc.connect('10.0.3.7', username='pi', password='{s}')",
        s,
        "context",
    )
    s = pw(16)
    add(
        "node_repl_history",
        f"await db.connect({{ user: 'admin', password: '{s}' }})\nconst pg = require('pg')",
        s,
        "context",
    )
    s = pw(16)
    add(
        "rediscli_history_config_set", f'CONFIG SET requirepass "{s}"\nCONFIG REWRITE', s, "context"
    )
    s = pw(16)
    add(
        "vllm_like_ps_output_password_arg",
        f"USER   PID %CPU %MEM COMMAND\nkdm  41220  2.1  0.4 /usr/bin/java -jar keycloak.jar start --db-password={s} --hostname=id.acme.io",
        s,
        "context",
    )
    s = pw(16)
    add(
        "sudo_journal_command_line",
        f"Dec 02 10:12:44 web03 sudo[8812]:      kdm : TTY=pts/1 ; PWD=/home/kdm ; USER=root ; COMMAND=/usr/bin/htpasswd -bc /etc/nginx/.htpasswd admin {s}",
        s,
        "context",
    )


def logs_and_traces() -> None:
    section("context: CI logs, stack traces, protocol dumps")
    s = pw(18)
    add(
        "gha_add_mask_literal_in_script",
        f'Run echo "::add-mask::{s}"\n  echo "::add-mask::{s}"\n  shell: /usr/bin/bash -e {{0}}',
        s,
        "context",
    )
    s = jwt({"sub": "deploy", "aud": "api.acme.io", "exp": 1796197200}, alg="RS256")
    add(
        "kubectl_v9_curl_bearer_log",
        f'I1202 10:11:12.123456  4242 round_trippers.go:466] curl -v -XGET  -H "Accept: application/json" -H "Authorization: Bearer {s}" \'https://10.96.0.1:443/api/v1/namespaces/default/pods?limit=500\'',
        s,
        "provider",
    )
    s = r(40, B64URL)
    add(
        "terraform_tf_log_debug_header",
        f'2026-12-02T10:14:03.551Z [DEBUG] provider.terraform-provider-grafana: HTTP Request Sent: Authorization="Bearer {s}" Host=acme.grafana.net',
        s,
        "context",
    )
    s = pw(16)
    add(
        "spring_boot_bind_failure",
        f'***************************\nAPPLICATION FAILED TO START\n***************************\n\nDescription:\n\nFailed to bind properties under \'spring.datasource.password\' to java.lang.String:\n\n    Property: spring.datasource.password\n    Value: "{s}"\n    Origin: System Environment Property "SPRING_DATASOURCE_PASSWORD"',
        s,
        "context",
    )
    s = pw(16)
    add(
        "node_error_config_object_dump",
        f"Error: connect ECONNREFUSED 10.0.0.7:5432\n    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1607:16) {{\n  errno: -111,\n  config: {{ host: '10.0.0.7', user: 'orders', password: '{s}', database: 'orders' }}\n}}",
        s,
        "context",
    )
    s = pw(16)
    add(
        "dotnet_exception_connection_string",
        f"Unhandled exception. Microsoft.Data.SqlClient.SqlException (0x80131904): Login failed for user 'app'.\n   at Acme.Startup.Migrate(String cs) in /src/Startup.cs:line 41\n   cs = \"Server=sql01;Database=Acme;User Id=app;Password={s};TrustServerCertificate=True\"",
        s,
        "context",
    )
    s = r(40, B64URL)
    add(
        "ruby_faraday_error_headers",
        f'Faraday::UnauthorizedError: the server responded with status 401\n  request: {{:method=>:get, :url=>"https://api.acme.io/v1/orders", :headers=>{{"X-Api-Key"=>"{s}", "User-Agent"=>"Faraday v2.12.0"}}}}',
        s,
        "context",
    )
    s = pw(16)
    add(
        "laravel_ignition_env_dump",
        f"Illuminate\\Database\\QueryException\nSQLSTATE[HY000] [1045] Access denied for user 'forge'@'10.0.0.4'\n\nEnvironment\n  DB_USERNAME  forge\n  DB_PASSWORD  {s}",
        s,
        "context",
    )
    s = pw(16)
    add(
        "rust_anyhow_context_url",
        f"Error: failed to connect to the broker\n\nCaused by:\n    0: amqp://svc:{s}@mq.acme.io:5672/%2f\n    1: Connection refused (os error 111)",
        s,
        "context",
    )
    s = pw(16)
    add(
        "kotlin_data_class_tostring_log",
        f"2026-12-02 10:15:01 INFO  c.a.b.Config - Loaded SmtpSettings(host=smtp.acme.io, port=587, user=alerts, password={s}, tls=true)",
        s,
        "context",
    )
    s = pw(16, "")
    u, p = b64("alerts@acme.io"), b64(s)
    add(
        "smtp_auth_login_two_step",
        f"C: EHLO build01\nS: 250-AUTH LOGIN PLAIN\nC: AUTH LOGIN\nS: 334 VXNlcm5hbWU6\nC: {u}\nS: 334 UGFzc3dvcmQ6\nC: {p}\nS: 235 2.7.0 Authentication successful",
        p,
        "context",
    )
    s = pw(16)
    add(
        "pop3_user_pass_transcript",
        f"+OK POP3 ready\nUSER kdm\n+OK\nPASS {s}\n+OK Logged in.",
        s,
        "context",
    )
    s = pw(16)
    add(
        "nntp_authinfo_pass",
        f"200 news.acme.io ready\nAUTHINFO USER kdm\n381 Password required\nAUTHINFO PASS {s}\n281 Authentication accepted",
        s,
        "context",
    )
    s = pw(16, "")
    xmpp = b64(f"\0kdm\0{s}")
    add(
        "xmpp_sasl_plain_stanza",
        f"<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='PLAIN'>{xmpp}</auth>",
        xmpp,
        "context",
    )
    s = pw(16)
    add(
        "mqtt_connect_decoded",
        f"MQ Telemetry Transport Protocol, Connect Command\n    Protocol Name: MQTT\n    Client ID: sensor-17\n    User Name: sensor\n    Password: {s}",
        s,
        "context",
    )
    s = pw(16)
    add(
        "pgwire_password_message_decode",
        f"PostgreSQL\n    Type: Password message\n    Length: {len(s) + 5}\n    Password: {s}",
        s,
        "context",
    )
    s = pw(16)
    add(
        "ldap_simple_bind_tshark",
        f'Lightweight Directory Access Protocol\n    LDAPMessage bindRequest(1) "cn=svc-jenkins,ou=svc,dc=acme,dc=io" simple\n        authentication: simple (0)\n            simple: {s}',
        s,
        "context",
    )
    s = pw(16, "")
    telnet = f"{s}"
    add(
        "telnet_session_capture",
        f"Trying 10.0.9.2...\nConnected to switch-b2.\nUser Access Verification\nUsername: admin\nPassword: {telnet}\nswitch-b2#show run | i hostname",
        s,
        "context",
    )
    s = pw(16)
    add(
        "proxy_authorization_basic_squid_log",
        f'1764660600.120    412 10.0.2.15 TCP_MISS/200 5120 CONNECT api.acme.io:443 - HIER_DIRECT/52.1.1.1 - "Proxy-Authorization: Basic {b64("build:" + s)}"',
        b64("build:" + s),
        "context",
    )
    s = r(40, B64URL)
    add(
        "websocket_handshake_token_query",
        f"GET /socket?token={s}&vsn=2.0.0 HTTP/1.1\nHost: live.acme.io\nUpgrade: websocket\nConnection: Upgrade\nSec-WebSocket-Version: 13",
        s,
        "context",
    )
    s = r(40, B64URL)
    add(
        "grpc_metadata_dump",
        f"grpcurl -v -H 'authorization: Bearer {s}' api.acme.io:443 acme.orders.v1.Orders/List\n\nResponse headers received:\ncontent-type: application/grpc",
        s,
        "context",
    )
    s = pw(16, "")
    amqp = f"\\x00guest-admin\\x00{s}"
    add(
        "amqp_start_ok_plain_response",
        f"Connection.Start-Ok\n    mechanism: PLAIN\n    response: b'{amqp}'\n    locale: en_US",
        s,
        "context",
    )
    s = r(40, B64URL)
    add(
        "oauth_implicit_fragment_redirect",
        f"302 Location: https://app.acme.io/callback#access_token={s}&token_type=Bearer&expires_in=3600&state=af0ifjsldkj",
        s,
        "context",
    )
    s = pw(16)
    add(
        "form_urlencoded_body_log",
        f"POST /login HTTP/1.1\nContent-Type: application/x-www-form-urlencoded\n\nusername=ops%40acme.io&password={urllib.parse.quote(s, safe='')}&remember=1",
        urllib.parse.quote(s, safe=""),
        "context",
    )


def prose() -> None:
    section("context: chat and prose in several languages")
    lines = [
        ("czech_chat", "Ahoj, heslo k testovací databázi je {s}, prosím nikomu ho neposílej."),
        ("greek_chat", "Ο κωδικός για το staging είναι {s} — μην τον βάλεις στο repo."),
        ("hebrew_chat", "הסיסמה לשרת הבדיקות היא {s} תמחק אחרי שקראת"),
        ("thai_chat", "รหัสผ่านของเซิร์ฟเวอร์ทดสอบคือ {s} อย่าส่งต่อนะ"),
        ("finnish_chat", "Testipalvelimen salasana on {s}, vaihdetaan se perjantaina."),
        ("danish_chat", "Adgangskoden til staging er {s} – slet beskeden bagefter."),
        ("norwegian_chat", "Passordet til byggserveren er {s}, ikke del det videre."),
        ("hungarian_chat", "A teszt adatbázis jelszava: {s} — kérlek ne tedd be a repóba."),
        ("romanian_chat", "Parola pentru mediul de test este {s}, o schimbăm mâine."),
        ("persian_chat", "رمز عبور سرور تست {s} است، لطفاً جایی ذخیره نکن."),
        ("bengali_chat", "স্টেজিং সার্ভারের পাসওয়ার্ড হল {s} কাউকে দিও না।"),
        ("tagalog_chat", "Ang password ng staging server ay {s}, huwag mong ibahagi."),
        ("swahili_chat", "Nenosiri la seva ya majaribio ni {s} usimpe mtu mwingine."),
        ("catalan_chat", "La contrasenya del servidor de proves és {s}, no la comparteixis."),
        ("serbian_cyrillic_chat", "Лозинка за тест сервер је {s}, немој је слати даље."),
        ("malay_chat", "Kata laluan pelayan ujian ialah {s}, jangan kongsi dengan sesiapa."),
    ]
    for kind, template in lines:
        s = pw(15)
        add(kind, template.format(s=s), s, "context")
    s = pw(16)
    add(
        "english_no_secret_word_handover",
        f"handover: box is 10.0.7.3, user ops, {s} gets you in. rotate after the audit",
        s,
        "context",
    )
    s = pw(16)
    add(
        "whatsapp_export_line",
        f"[02/12/26, 10:41:05] Ana Ruiz: el wifi de la oficina nueva\n[02/12/26, 10:41:22] Ana Ruiz: {s}",
        s,
        "context",
    )
    s = pw(16)
    add(
        "discord_chat_exporter_json",
        json.dumps(
            {
                "messages": [
                    {
                        "id": str(rng.getrandbits(60)),
                        "timestamp": "2026-12-02T10:42:00+00:00",
                        "content": f"grafana admin login is admin / {s}",
                        "author": {"name": "kdm"},
                    }
                ]
            }
        ),
        s,
        "context",
    )
    s = pw(16)
    add(
        "zoom_vtt_transcript",
        f"WEBVTT\n\n00:12:04.120 --> 00:12:09.880\nMarco: ok so for the vendor portal the login is acme-ops and the password is {s}\n\n00:12:10.000 --> 00:12:12.400\nJen: got it",
        s,
        "context",
    )
    s = pw(16)
    add(
        "email_quoted_reply_chain",
        f"> > On Mon, Dec 1, 2026 at 9:12 AM Jen <jen@acme.io> wrote:\n> > Can you send me the SFTP login?\n> Sure: sftp://upload@files.acme.io\n> Password: {s}\nThanks, that worked.",
        s,
        "context",
    )
    s = pw(16)
    add(
        "confluence_storage_format_macro",
        f'<ac:structured-macro ac:name="code"><ac:plain-text-body><![CDATA[mongo -u admin -p {s} --authenticationDatabase admin]]></ac:plain-text-body></ac:structured-macro>',
        s,
        "context",
    )
    s = pw(16)
    add(
        "jira_wiki_markup_code_block",
        f"h3. Repro\n{{code:bash}}\nexport ES_PASSWORD={s}\ncurl -u elastic:$ES_PASSWORD https://es.acme.io:9200/_cluster/health\n{{code}}",
        s,
        "context",
    )
    s = pw(16)
    add(
        "github_issue_details_block",
        f"<details><summary>Full log</summary>\n\n```\nINFO  connecting as admin with password {s}\nERROR timeout after 30s\n```\n</details>",
        s,
        "context",
    )
    s = pw(16)
    add(
        "notion_export_callout",
        f"> 💡 **Staging access**\n> URL: https://staging.acme.io/admin\n> User: `admin` · Pass: `{s}`",
        s,
        "context",
    )
    s = pw(16)
    add(
        "teams_html_export_message",
        f'<div class="message"><span class="from">Priya</span><p>VPN pre-shared key for the new site: <code>{s}</code></p></div>',
        s,
        "context",
    )
    s = pw(16)
    add(
        "commit_message_revert_leak",
        f'Revert "add local settings"\n\nThis reverts commit {hx(40)}.\nIt had DJANGO_DB_PASSWORD={s} in settings_local.py; rotated.',
        s,
        "context",
    )
    s = r(40, B64URL)
    add(
        "commit_message_trailer_token",
        f"ci: use the new registry mirror\n\nMirror-Token: {s}\nSigned-off-by: K. D. Mills <kdm@acme.io>",
        s,
        "context",
    )
    s = pw(16)
    add(
        "pr_description_testing_steps",
        f"## How to test\n1. Log in as `qa-admin` / `{s}` on the preview URL\n2. Open Settings → Billing\n3. Check the invoice list loads",
        s,
        "context",
    )
    s = pw(16)
    add(
        "code_comment_todo_remove",
        f"# TODO(kdm): remove before merge — temp admin pw {s}\nADMIN_PASSWORD = os.environ.get('ADMIN_PASSWORD')",
        s,
        "context",
    )


def code() -> None:
    section("context: code (literals, positional arguments, builders)")
    items = [
        (
            "java_drivermanager_positional",
            'Connection c = DriverManager.getConnection("jdbc:postgresql://pg/app", "app", "{s}");',
        ),
        ("python_ftplib_positional", 'ftp = ftplib.FTP_TLS("ftp.partner.net", "acme", "{s}")'),
        (
            "python_pymysql_positional",
            'conn = pymysql.connect("db.internal", "report", "{s}", "analytics")',
        ),
        ("python_redis_positional_password", 'r = redis.Redis("cache.internal", 6379, 0, "{s}")'),
        (
            "go_ssh_password_auth",
            'config := &ssh.ClientConfig{{\n\tUser: "deploy",\n\tAuth: []ssh.AuthMethod{{ssh.Password("{s}")}},\n}}',
        ),
        (
            "rust_reqwest_basic_auth",
            'let res = client.get(url).basic_auth("ci", Some("{s}")).send().await?;',
        ),
        ("kotlin_okhttp_credentials_basic", 'val auth = Credentials.basic("svc-reporting", "{s}")'),
        (
            "swift_urlcredential",
            'let cred = URLCredential(user: "kiosk", password: "{s}", persistence: .forSession)',
        ),
        (
            "dart_basic_credentials",
            "client.addCredentials(uri, 'realm', HttpClientBasicCredentials('app', '{s}'));",
        ),
        (
            "node_nodemailer_transport",
            "const t = nodemailer.createTransport({{ host: 'smtp.acme.io', port: 587, auth: {{ user: 'noreply@acme.io', pass: '{s}' }} }});",
        ),
        (
            "js_sequelize_positional",
            "const sequelize = new Sequelize('shop', 'shop', '{s}', {{ host: 'db', dialect: 'mariadb' }});",
        ),
        ("php_mysqli_positional", "$db = new mysqli('127.0.0.1', 'wp', '{s}', 'wordpress');"),
        ("php_ldap_bind_positional", "ldap_bind($conn, 'cn=reader,dc=acme,dc=io', '{s}');"),
        (
            "ruby_net_ftp_open",
            "Net::FTP.open('ftp.acme.io', 'upload', '{s}') {{ |ftp| ftp.putbinaryfile('report.csv') }}",
        ),
        (
            "haskell_libpq_keyword_string",
            'conn <- connectPostgreSQL "host=pg dbname=app user=app password={s}"',
        ),
        (
            "julia_libpq_connection",
            'conn = LibPQ.Connection("host=pg.internal dbname=metrics user=grafana password={s}")',
        ),
        ("zig_string_constant", 'const smtp_password: []const u8 = "{s}";'),
        ("nim_let_binding", 'let dbConn = open("pg.internal", "nim", "{s}", "app")'),
        ("crystal_db_open", 'DB.open "postgres://crystal:{s}@pg.internal/app"'),
        ("ocaml_let_binding", 'let admin_password = "{s}"'),
        (
            "fsharp_let_binding",
            'let connStr = "Server=sql01;Database=Acme;User Id=fs;Password={s};"',
        ),
        (
            "vbnet_networkcredential",
            'Dim cred As New NetworkCredential("svc_print", "{s}", "ACME")',
        ),
        ("delphi_connection_params", "FDConnection1.Params.Values['Password'] := '{s}';"),
        (
            "apex_named_credential_hardcoded",
            "req.setHeader('Authorization', 'Basic ' + EncodingUtil.base64Encode(Blob.valueOf('integration:{s}')));",
        ),
        (
            "java_builder_credentials",
            'MongoCredential cred = MongoCredential.createCredential("app", "admin", "{s}".toCharArray());',
        ),
        (
            "csharp_object_initializer",
            'var opts = new RabbitMQOptions {{ HostName = "mq", UserName = "orders", Password = "{s}" }};',
        ),
        (
            "python_testcontainers_with_password",
            'pg = PostgresContainer("postgres:17").with_env("POSTGRES_PASSWORD", "{s}")',
        ),
        (
            "java_testcontainers_withpassword",
            'new MySQLContainer<>("mysql:8.4").withUsername("it").withPassword("{s}")',
        ),
        (
            "sql_create_login_concat_proc",
            "EXEC sp_addlinkedsrvlogin @rmtsrvname = N'LEGACY', @useself = N'False', @rmtuser = N'sa', @rmtpassword = N'{s}';",
        ),
        (
            "powershell_splatting_hashtable",
            "$params = @{{ ServerInstance = 'sql01'; Username = 'sa'; Password = '{s}' }}\nInvoke-Sqlcmd @params -Query 'SELECT 1'",
        ),
    ]
    for kind, template in items:
        s = pw(16, "!#%*+-.=?@^_~")
        add(kind, template.format(s=s), s, "context")


def fixtures_and_notebooks() -> None:
    section("context: test fixtures and notebooks")
    s = "sk_live_" + r(99)
    add(
        "vcr_cassette_recorded_header",
        f"interactions:\n- request:\n    body: null\n    headers:\n      Authorization:\n      - Bearer {s}\n    method: GET\n    uri: https://api.stripe.com/v1/customers?limit=3",
        s,
        "provider",
    )
    s = r(40, B64URL)
    wire = {
        "request": {
            "method": "GET",
            "urlPath": "/v1/orders",
            "headers": {"X-Api-Key": {"equalTo": s}},
        },
        "response": {"status": 200},
    }
    add("wiremock_mapping_header_equalto", json.dumps(wire, indent=2), s, "context")
    s = crc_token("ghp_", 30)
    add(
        "pytest_fixture_returning_token",
        f'@pytest.fixture\ndef gh_token() -> str:\n    # recorded against the real org, keep until the cassette is re-recorded\n    return "{s}"',
        s,
        "provider",
    )
    s = pw(16)
    add(
        "jest_setup_env_assignment",
        f"// jest.setup.ts\nprocess.env.SMTP_PASSWORD = '{s}';\nprocess.env.NODE_ENV = 'test';",
        s,
        "context",
    )
    s = pw(16)
    add(
        "rspec_let_password_prod_like",
        f"let(:prod_readonly_password) {{ '{s}' }} # copied from the prod vault for the smoke spec",
        s,
        "context",
    )
    s = pw(16)
    add(
        "django_fixture_json_plain_password",
        json.dumps(
            [
                {
                    "model": "integrations.smtpaccount",
                    "pk": 1,
                    "fields": {"host": "smtp.acme.io", "username": "alerts", "password": s},
                }
            ]
        ),
        s,
        "context",
    )
    s = openai_proj()
    nb = {
        "cell_type": "code",
        "execution_count": 3,
        "metadata": {},
        "outputs": [],
        "source": ["import os\n", f'os.environ["OPENAI_API_KEY"] = "{s}"\n', "client = OpenAI()\n"],
    }
    add(
        "ipynb_source_lines_json",
        json.dumps({"cells": [nb], "nbformat": 4, "nbformat_minor": 5}, indent=1),
        s,
        "provider",
    )
    s = "hf_" + r(34, LETTERS)
    nb = {
        "cell_type": "code",
        "execution_count": 1,
        "metadata": {},
        "outputs": [
            {"name": "stdout", "output_type": "stream", "text": ["env: HF_TOKEN=" + s + "\n"]}
        ],
        "source": ["%env HF_TOKEN=" + s],
    }
    add("ipynb_env_magic_output", json.dumps(nb), s, "provider")
    s = r(40, B64URL)
    add(
        "ipynb_shell_curl_cell",
        json.dumps(
            {
                "cell_type": "code",
                "source": [
                    f"!curl -s -H 'Authorization: Bearer {s}' https://api.acme.io/v1/datasets | head"
                ],
            }
        ),
        s,
        "context",
    )
    s = pw(16)
    add(
        "marimo_notebook_cell",
        f'@app.cell\ndef _():\n    engine = sqlalchemy.create_engine("postgresql://analyst:{s}@warehouse.acme.io/dw")\n    return (engine,)',
        s,
        "context",
    )
    s = "AKIA" + r(16, AWS32)
    sec = r(40, B64)
    add(
        "ipynb_output_boto_credentials_print",
        json.dumps(
            {
                "output_type": "stream",
                "name": "stdout",
                "text": [
                    f"Credentials(access_key='{s}', secret_key='{sec}', token=None, method='shared-credentials-file')\n"
                ],
            }
        ),
        sec,
        "context",
    )


def exports() -> None:
    section("context: password-manager and data exports")
    s = pw(16)
    add(
        "chrome_passwords_csv",
        f"name,url,username,password,note\nacme.grafana.net,https://acme.grafana.net/login,admin,{s},",
        s,
        "context",
    )
    s = pw(16)
    add(
        "firefox_logins_csv",
        f'"url","username","password","httpRealm","formActionOrigin","guid","timeCreated","timeLastUsed","timePasswordChanged"\n"https://jenkins.acme.io","kdm","{s}",,"https://jenkins.acme.io","{{{uid()}}}","1733140000000","1764660000000","1733140000000"',
        s,
        "context",
    )
    s = pw(16)
    add(
        "lastpass_csv_export",
        f"url,username,password,totp,extra,name,grouping,fav\nhttps://console.hetzner.cloud,ops@acme.io,{s},,,Hetzner,Infra,0",
        s,
        "context",
    )
    s = pw(16)
    add(
        "apple_passwords_csv",
        f"Title,URL,Username,Password,Notes,OTPAuth\nrouter.acme.lan (admin),http://router.acme.lan,admin,{s},,",
        s,
        "context",
    )
    s = pw(16)
    add(
        "keepassxc_csv_export",
        f'"Group","Title","Username","Password","URL","Notes","TOTP","Icon","Last Modified","Created"\n"Root/Infra","pfSense","admin","{s}","https://fw.acme.lan","","","0","2026-11-30T10:00:00Z","2025-02-01T09:00:00Z"',
        s,
        "context",
    )
    s = pw(16)
    add(
        "bitwarden_csv_export",
        f"folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\nInfra,,login,Proxmox,,,0,https://pve.acme.lan:8006,root@pam,{s},",
        s,
        "context",
    )
    s = pw(16)
    add(
        "dashlane_csv_export",
        f"username,username2,username3,title,password,note,url,category,otpSecret\nsvc-backup,,,Synology,{s},,https://nas.acme.lan:5001,Utilities,",
        s,
        "context",
    )
    s = pw(16)
    add(
        "onepassword_1pux_json_fragment",
        json.dumps(
            {
                "overview": {"title": "Staging Postgres", "url": "postgres://pg.staging"},
                "details": {
                    "loginFields": [
                        {"designation": "username", "value": "app"},
                        {"designation": "password", "value": s},
                    ]
                },
            }
        ),
        s,
        "context",
    )
    s = pw(16)
    ldif_b64 = b64(s)
    add(
        "ldif_userpassword_base64",
        f"dn: uid=jenkins,ou=svc,dc=acme,dc=io\nobjectClass: inetOrgPerson\nuid: jenkins\nuserPassword:: {ldif_b64}",
        ldif_b64,
        "context",
    )
    s = pw(16)
    add(
        "psql_expanded_output_row",
        f"-[ RECORD 1 ]--+------------------------\nid             | 17\nname           | partner-sftp\nusername       | partner\npassword       | {s}\ncreated_at     | 2026-11-02 10:00:00+00",
        s,
        "context",
    )
    s = pw(16)
    add(
        "mysql_vertical_output_row",
        f"*************************** 1. row ***************************\n      id: 4\n    host: smtp.acme.io\nusername: alerts\npassword: {s}",
        s,
        "context",
    )
    s = pw(16)
    add(
        "xml_spreadsheet_export_row",
        f'<Row><Cell><Data ss:Type="String">vpn-gw</Data></Cell><Cell><Data ss:Type="String">admin</Data></Cell><Cell><Data ss:Type="String">{s}</Data></Cell></Row>',
        s,
        "context",
    )


# ============================================================================ (c) disguises


def _qp(text: str, width: int = 20) -> str:
    """Quoted-printable of ASCII text with '=' escaped and soft breaks every `width` chars."""
    body = text.replace("=", "=3D")
    return "=\n".join(body[i : i + width] for i in range(0, len(body), width))


def disguises() -> None:  # noqa: PLR0915
    section("disguise: split, joined, encoded, escaped")
    s = "sk-ant-api03-" + r(93, B64URL) + "AA"
    a, b, c = s[:40], s[40:80], s[80:]
    add(
        "anthropic_key_python_implicit_concat",
        f'API_KEY = (\n    "{a}"\n    "{b}"\n    "{c}"\n)',
        s,
        "provider",
        [a, b, c],
    )
    s = crc_token("ghp_", 30)
    a, b = s[:20], s[20:]
    add(
        "github_token_java_stringbuilder",
        f'String t = new StringBuilder().append("{a}").append("{b}").toString();',
        s,
        "provider",
        [a, b],
    )
    s = pw(16, "")
    codes = ", ".join(str(ord(ch)) for ch in s)
    add("password_js_fromcharcode", f"const pw = String.fromCharCode({codes});", codes, "context")
    s = pw(16, "")
    blist = "[" + ", ".join(str(ord(ch)) for ch in s) + "]"
    add("password_python_bytes_list", f"DB_PASS = bytes({blist}).decode()", blist, "context")
    s = pw(16, "")
    rev = list(reversed(s))
    arr = "[" + ", ".join(f"'{ch}'" for ch in rev) + "]"
    add(
        "password_js_char_array_reverse_join",
        f"const secret = {arr}.reverse().join('');",
        arr,
        "context",
    )
    s = pw(16, "")
    a, b = s[:8], s[8:]
    add(
        "password_rust_concat_macro",
        f'const DB_PASSWORD: &str = concat!("{a}", "{b}");',
        s,
        "context",
        [a, b],
    )
    s = pw(16, "")
    arr = ",".join(f"'{ch}'" for ch in s)
    add(
        "password_powershell_char_join",
        f"$p = -join ({arr})\nInvoke-RestMethod -Uri $u -Credential (New-Object PSCredential('svc', (ConvertTo-SecureString $p -AsPlainText -Force)))",
        arr,
        "context",
    )
    s = pw(16, "")
    a, b = s[:8], s[8:]
    add(
        "password_sql_concat_create_user",
        f"SET @p = CONCAT('{a}', '{b}');\nSET @q = CONCAT('CREATE USER ''etl''@''%'' IDENTIFIED BY ''', @p, '''');\nPREPARE st FROM @q; EXECUTE st;",
        s,
        "context",
        [a, b],
    )
    s = pw(16, "")
    a, b = s[:8], s[8:]
    add(
        "password_excel_concat_formula",
        f'=CONCATENATE("{a}","{b}")\t← col D \'vpn psk\' in infra.xlsx',
        s,
        "context",
        [a, b],
    )
    s = "xoxb-" + r(12, DIGITS) + "-" + r(13, DIGITS) + "-" + r(24)
    a, b = s[:22], s[22:]
    add(
        "slack_token_shell_line_continuation",
        f'export SLACK_BOT_TOKEN="{a}\\\n{b}"',
        s,
        "provider",
        [a, b],
    )
    s = openai_proj()
    chunks = [s[i : i + 48] for i in range(0, len(s), 48)]
    add(
        "openai_key_json_array_chunks",
        json.dumps({"key_parts": chunks, "join": ""}),
        s,
        "provider",
        chunks,
    )
    s = "AKIA" + r(16, AWS32)
    sec = r(40, B64)
    a, b = sec[:20], sec[20:]
    add(
        "aws_secret_toml_multiline_string",
        f'[aws]\naccess_key_id = "{s}"\nsecret_access_key = """\\\n{a}\\\n{b}"""',
        sec,
        "context",
        [a, b],
    )
    s = pw(20, "")
    raw = s.encode()
    blob = b"password=" + raw + b"\n"
    rows = []
    for i in range(0, len(blob), 16):
        chunk = blob[i : i + 16]
        hexpart = " ".join(chunk[j : j + 2].hex() for j in range(0, len(chunk), 2))
        rows.append(f"{i:08x}: {hexpart:<40} {chunk.decode().replace(chr(10), '.')}")
    parts = [row.split(" ")[-1] for row in rows]
    parts = [p.replace("password=", "") for p in parts if len(p.replace("password=", "")) >= 6]
    add(
        "password_xxd_dump_ascii_column",
        "$ xxd .db_secret\n" + "\n".join(rows),
        s,
        "context",
        parts,
    )
    s = r(40, B64URL)
    add(
        "token_ansi_colored_output",
        f"\x1b[1;32m✔\x1b[0m token created: \x1b[1;33m{s}\x1b[0m (copy it now, it won't be shown again)",
        s,
        "context",
    )
    s = pw(16)
    add(
        "password_diff_context_line",
        f"@@ -10,7 +10,7 @@ services:\n   db:\n     environment:\n       POSTGRES_USER: app\n       POSTGRES_PASSWORD: {s}\n-      POSTGRES_DB: app\n+      POSTGRES_DB: app_v2",
        s,
        "context",
    )
    s = pw(16)
    add(
        "password_side_by_side_diff",
        f"DB_HOST=db.internal\t\t\t\t\tDB_HOST=db.internal\nDB_PASSWORD={s}\t\t\t      |\tDB_PASSWORD=${{DB_PASSWORD}}",
        s,
        "context",
    )
    s = pw(16)
    add(
        "password_git_blame_line",
        f'{hx(8)} (K. D. Mills 2026-11-30 09:12:44 +0100 17) SMTP_PASSWORD = "{s}"',
        s,
        "context",
    )
    s = pw(16)
    add(
        "password_grep_rn_output",
        f"$ grep -rn PASSWORD config/\nconfig/prod.ini:12:password = {s}\nconfig/dev.ini:12:password = ${{DEV_PASSWORD}}",
        s,
        "context",
    )
    s = pw(16, "")
    add("password_cat_A_output", f"$ cat -A .env\nDB_USER=app$\nDB_PASS=^I{s}^I$\n", s, "context")
    s = r(40, B64URL)
    add(
        "token_strings_output_binary",
        f"$ strings -n 12 build/agent | grep -i -A1 token\nX-Agent-Token\n{s}\nhttps://ingest.acme.io/v1",
        s,
        "context",
    )
    s = pw(16)
    add(
        "password_cat_n_numbered",
        f"     1\t[client]\n     2\tuser=backup\n     3\tpassword={s}\n     4\thost=db01",
        s,
        "context",
    )
    s = pw(16, "")
    uu = binascii.b2a_uu(f"ftp_password={s}\n".encode()).decode().strip()
    add(
        "password_uuencoded_attachment",
        f"begin 644 ftp.cfg\n{uu}\n`\nend",
        uu,
        "context",
    )
    s = pw(16, "")
    enc = "".join(f"\\{ord(ch):03o}" for ch in s)
    add("password_python_octal_escapes", f'SMTP_PASS = b"{enc}".decode()', enc, "context")
    s = pw(16, "")
    enc = "".join(f"&#x{ord(ch):x};" for ch in s)
    add(
        "password_html_hex_entities",
        f'<input type="hidden" name="legacy_pw" value="{enc}">',
        enc,
        "context",
    )
    s = r(40, B64URL)
    add(
        "token_html_hidden_input",
        f'<form method="post" action="/api/v1/import">\n  <input type="hidden" name="api_key" value="{s}">\n</form>',
        s,
        "context",
    )
    s = "sk_live_" + r(99)
    qp = _qp(f"STRIPE_SECRET_KEY={s}", 30)
    qparts = [line.rstrip("=") for line in qp.splitlines()]
    qparts = [p for p in qparts if len(p) >= 6 and "STRIPE" not in p]
    add(
        "stripe_key_quoted_printable_soft_breaks",
        f"Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n\nHere is the prod env line you asked for:\n{qp}\n",
        s,
        "provider",
        qparts,
    )
    s = pw(16)
    wrapped = b64(
        f"[client]\nuser=root\npassword={s}\nhost=db01\nport=3306\nsocket=/var/run/mysqld/mysqld.sock\n"
    )
    lines76 = [wrapped[i : i + 40] for i in range(0, len(wrapped), 40)]
    add(
        "mycnf_base64_wrapped_attachment",
        'Content-Type: application/octet-stream; name="my.cnf"\nContent-Transfer-Encoding: base64\n\n'
        + "\n".join(lines76),
        wrapped,
        "context",
        lines76,
    )
    s = pw(16)
    envb64 = b64(
        f"APP_ENV=production\nDB_HOST=db.internal\nDB_PASSWORD={s}\nREDIS_URL=redis://cache:6379/0\n"
    )
    add(
        "env_file_base64_ci_variable",
        f'variables:\n  ENV_FILE_B64: "{envb64}"\nscript:\n  - echo "$ENV_FILE_B64" | base64 -d > .env',
        envb64,
        "context",
    )
    s = pw(20, "")
    payload = f"PASS {s}\r\n".encode()
    hex_lines = []
    for offset in range(0, len(payload), 16):
        chunk = payload[offset : offset + 16].hex()
        hex_lines.append(" ".join(chunk[i : i + 4] for i in range(0, len(chunk), 4)))
    dump = "\n".join(f"\t0x{16 * i:04x}:  {line}" for i, line in enumerate(hex_lines))
    add(
        "password_tcpdump_x_hex_payload",
        f"$ tcpdump -i eth0 -x -s0 'tcp port 21'\n10:22:31.112 IP 10.0.0.5.51544 > 10.0.0.9.21: Flags [P.], length {len(payload)}\n{dump}",
        s,
        "context",
        [line for line in hex_lines if len(line) >= 6],
    )
    s = pw(16)
    enc = urllib.parse.quote(s, safe="")
    add(
        "password_git_remote_percent_encoded",
        f'[remote "origin"]\n\turl = https://deploy:{enc}@git.acme.io/ops/infra.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*',
        enc,
        "context",
    )
    s = pw(16, "!#%*+-.=?@^_~")
    enc = json.dumps(json.dumps({"user": "etl", "password": s}))
    add(
        "password_json_in_yaml_string",
        f"apiVersion: v1\nkind: ConfigMap\ndata:\n  creds.json: {enc}",
        s,
        "context",
    )
    s = pw(16)
    add(
        "env_file_yaml_block_scalar",
        f"apiVersion: v1\nkind: Secret\nstringData:\n  .env: |-\n    NODE_ENV=production\n    SESSION_SECRET={s}\n    PORT=3000",
        s,
        "context",
    )
    s = pw(16)
    add(
        "password_yaml_folded_plain_multiline",
        f"db:\n  dsn: >-\n    host=pg.internal port=5432 dbname=app\n    user=app password={s}\n    sslmode=require",
        s,
        "context",
    )
    s = pw(16, "")
    cisco7 = _cisco7(s)
    add(
        "cisco_type7_password",
        f"!\nusername netops privilege 15 password 7 {cisco7}\nline vty 0 4\n login local\n!",
        cisco7,
        "context",
    )
    s = r(40, B64URL)
    add(
        "rclone_obscured_password",
        f"[sftp-backup]\ntype = sftp\nhost = backup.acme.io\nuser = rclone\npass = {s}",
        s,
        "context",
    )
    s = pw(16)
    fz = b64(s)
    add(
        "filezilla_sitemanager_base64_pass",
        f'<Server>\n  <Host>ftp.partner.net</Host>\n  <Port>21</Port>\n  <User>acme</User>\n  <Pass encoding="base64">{fz}</Pass>\n</Server>',
        fz,
        "context",
    )
    s = hx(16)
    add(
        "vnc_passwd_obfuscated_hex",
        f"$ xxd -p ~/.vnc/passwd\n{s}\n# DES with the well-known fixed key; decrypts to the session password",
        s,
        "context",
    )
    s = hx(48)
    add(
        "winscp_ini_obfuscated_password",
        f"[Sessions\\deploy@web01]\nHostName=web01.acme.io\nUserName=deploy\nPassword={s}",
        s,
        "context",
    )
    s = pw(16, "")
    key = rng.randint(1, 255)
    xored = bytes(ord(ch) ^ key for ch in s).hex()
    add(
        "password_xor_obfuscated_hex",
        f'# not secret, just obfuscated :)\nDB_PASS = xor(bytes.fromhex("{xored}"), 0x{key:02x})',
        xored,
        "context",
    )
    s = pw(16)
    mid = r(40, B64URL)
    add(
        "token_in_markdown_table_cell_code",
        f"| Service | Key | Owner |\n|---|---|---|\n| Search | `{mid}` | @kdm |\n| Mail | see vault | @jen |",
        mid,
        "context",
    )
    s = r(40, B64URL)
    a, b = s[:20], s[20:]
    add(
        "token_markdown_table_br_split",
        f"| env | token |\n|---|---|\n| prod | {a}<br>{b} |",
        s,
        "context",
        [a, b],
    )
    s = pw(16, "")
    add(
        "password_mime_base64_encoded_word",
        f"Subject: =?utf-8?B?{b64('Neues VPN-Passwort: ' + s)}?=",
        b64("Neues VPN-Passwort: " + s),
        "context",
    )
    s = "glpat-" + r(20, B64URL)
    add(
        "gitlab_token_url_encoded_twice_in_log",
        f"GET /redirect?next=https%253A%252F%252Fgitlab.acme.io%252Fapi%252Fv4%252Fprojects%253Fprivate_token%253D{s} 302",
        s,
        "provider",
    )
    s = "github_pat_" + r(22) + "_" + r(59)
    a, b, c = s[:30], s[30:60], s[60:]
    add(
        "github_fine_grained_pat_env_parts_assembled",
        f'GH_A={a}\nGH_B={b}\nGH_C={c}\nexport GH_TOKEN="$GH_A$GH_B$GH_C"',
        s,
        "provider",
        [a, b, c],
    )
    s = pw(16)
    rev = s[::-1]
    add("password_reversed_env_with_rev", f"DB_PASS=$(echo '{rev}' | rev)", rev, "context")
    s = pw(16, "")
    b32 = base64.b32encode(s.encode()).decode()
    add(
        "password_base32_in_python",
        f'SMTP_PASSWORD = base64.b32decode("{b32}").decode()',
        b32,
        "context",
    )
    s = pw(16)
    a85 = base64.a85encode(s.encode()).decode()
    add(
        "password_ascii85_python",
        f"REPLICATION_PASSWORD = base64.a85decode({a85!r}).decode()",
        a85,
        "context",
    )
    s = pw(16)
    add(
        "password_conflict_base_section",
        f"<<<<<<< ours\nREDIS_PASSWORD=${{REDIS_PASSWORD}}\n||||||| base\nREDIS_PASSWORD={s}\n=======\nREDIS_PASSWORD=\n>>>>>>> theirs",
        s,
        "context",
    )
    s = pw(16)
    add(
        "password_git_format_patch_subject",
        f"From {hx(40)} Mon Sep 17 00:00:00 2001\nFrom: Jen <jen@acme.io>\nSubject: [PATCH] set ftp password to {s} for the import job\n\n---\n jobs/import.sh | 2 +-",
        s,
        "context",
    )


def _cisco7(text: str) -> str:
    xlat = "dsfd;kfoA,.iyewrkldJKDHSUBsgvca69834ncxv9873254k;fg87"
    seed = rng.randint(0, 15)
    out = f"{seed:02d}"
    for i, ch in enumerate(text):
        out += f"{ord(ch) ^ ord(xlat[(seed + i) % len(xlat)]):02X}"
    return out


# ============================================================================ benign look-alikes


def _sha512_integrity() -> str:
    return "sha512-" + b64(rbytes(64))


def _cert_b64() -> str:
    return b64(pem("CERTIFICATE", 700) + "\n")


def benign_vendor_like() -> None:
    section("vendor: source forges and CI")
    ben(
        "actions_pinned_sha",
        f"      - uses: actions/checkout@{hx(40)} # v4.2.2\n      - uses: actions/setup-node@{hx(40)} # v4.1.0",
    )
    ben(
        "gerrit_change_id",
        f"build: bump protobuf to 29.1\n\nChange-Id: I{hx(40)}\nReviewed-on: https://review.acme.io/c/infra/+/48213",
    )
    ben(
        "github_app_client_id",
        f"GITHUB_APP_ID=1048213\nGITHUB_APP_CLIENT_ID=Iv23li{r(14)}\nGITHUB_APP_PRIVATE_KEY_PATH=/run/secrets/gh-app.pem",
    )
    ben(
        "github_node_id",
        json.dumps(
            {"login": "acme-bot", "id": 184213, "node_id": "U_kgDO" + r(8, B64URL), "type": "Bot"}
        ),
    )
    ben(
        "gitlab_token_prefix_docs",
        "GitLab personal access tokens start with `glpat-`; feed tokens with `glft-`, runner tokens with `glrt-`. Use the prefix to spot them in logs.",
    )
    ben(
        "gitlab_ci_job_token_reference",
        'script:\n  - \'curl --header "JOB-TOKEN: $CI_JOB_TOKEN" --upload-file dist/app.tgz "${CI_API_V4_URL}/projects/${CI_PROJECT_ID}/packages/generic/app/${CI_COMMIT_TAG}/app.tgz"\'',
    )
    ben(
        "gh_secret_set_no_value",
        "gh secret set NPM_TOKEN --repo acme/web < /dev/stdin  # paste the token when prompted",
    )
    ben(
        "masked_github_token_gh_status",
        "github.com\n  ✓ Logged in to github.com account kdm (keyring)\n  - Active account: true\n  - Git operations protocol: https\n  - Token: gho_************************************\n  - Token scopes: 'gist', 'read:org', 'repo'",
    )
    ben(
        "git_log_oneline",
        "\n".join(
            f"{hx(7)} {msg}"
            for msg in (
                "fix(sync): retry on 502 from the remote",
                "docs: rotate-keys runbook",
                "chore(deps): bump ruff to 0.8.1",
                "feat: token prefix table in README",
            )
        ),
    )
    ben(
        "sourcegraph_search_query_prefix",
        "src search 'sgp_ count:all -file:test' --json | jq '.Results | length'",
    )
    ben(
        "sonar_project_key_props",
        "sonar.projectKey=acme_billing\nsonar.organization=acme\nsonar.host.url=https://sonarcloud.io\nsonar.token=${SONAR_TOKEN}",
    )
    ben(
        "pypi_trusted_publishing",
        "permissions:\n  id-token: write  # trusted publishing: no API token stored anywhere\nsteps:\n  - uses: pypa/gh-action-pypi-publish@release/v1",
    )
    ben(
        "clojars_deploy_env_reference",
        '{:deploy-repositories [["clojars" {:url "https://repo.clojars.org" :username :env/clojars_username :password :env/clojars_password}]]}',
    )
    ben(
        "octopus_release_number",
        "Created release 4.2.118 for project Payments API (channel Default); deployment task ServerTasks-289311 queued",
    )
    ben(
        "harness_pipeline_identifier",
        "pipeline:\n  identifier: build_and_deploy\n  projectIdentifier: payments\n  orgIdentifier: default\n  properties:\n    ci:\n      codebase:\n        connectorRef: account.github_acme",
    )
    section("vendor: cloud and infrastructure")
    ben(
        "aws_docs_example_keys",
        "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n# the documentation's example pair, replace with yours",
    )
    ben(
        "aws_arn_secretsmanager",
        f"SecretId: arn:aws:secretsmanager:eu-west-1:{r(12, DIGITS)}:secret:prod/billing/db-{r(6)}",
    )
    ben(
        "aws_request_ids",
        f"x-amzn-RequestId: {uid()}\nx-amz-id-2: {b64(rbytes(54))}\nx-amz-request-id: {r(16, UPPER)}",
    )
    ben("aws_kms_key_arn", f'kms_key_id = "arn:aws:kms:us-east-1:{r(12, DIGITS)}:key/mrk-{hx(32)}"')
    ben(
        "bedrock_model_ids",
        "BEDROCK_MODEL=us.anthropic.claude-sonnet-4-5-20250929-v1:0\nAWS_REGION=us-west-2\nAWS_BEARER_TOKEN_BEDROCK=${BEDROCK_KEY_FROM_SSM}",
    )
    ben(
        "azure_ids_tenant_client",
        f"AZURE_TENANT_ID={uid()}\nAZURE_CLIENT_ID={uid()}\nAZURE_SUBSCRIPTION_ID={uid()}\n# federated credential: no client secret",
    )
    ben(
        "azure_keyvault_reference",
        '"ServiceBusConnection": "@Microsoft.KeyVault(SecretUri=https://acme-kv.vault.azure.net/secrets/sb-conn/)"',
    )
    ben(
        "azure_storage_emulator_well_known",
        "AzureWebJobsStorage=UseDevelopmentStorage=true\n# Azurite's published development account is used locally; nothing to keep secret",
    )
    ben(
        "gcp_secret_manager_resource",
        f"projects/{r(12, DIGITS)}/secrets/db-password/versions/latest",
    )
    ben(
        "gcp_service_account_email",
        f"gcloud iam service-accounts keys list --iam-account=deployer@acme-prod-{r(6, DIGITS)}.iam.gserviceaccount.com --managed-by=user",
    )
    ben(
        "google_oauth_client_id",
        f"GOOGLE_CLIENT_ID={r(12, DIGITS)}-{r(32, LOWER)}.apps.googleusercontent.com\nGOOGLE_CLIENT_SECRET=${{GOOGLE_CLIENT_SECRET}}",
    )
    ben(
        "cloudflare_zone_account_ids",
        f'account_id = "{hx(32)}"\nzone_id    = "{hx(32)}"\nroute      = "api.acme.io/*"',
    )
    ben("cloudflare_ray_id", f"cf-ray: {hx(16)}-FRA\ncf-cache-status: DYNAMIC\nserver: cloudflare")
    ben(
        "r2_bucket_endpoint",
        f'endpoint = "https://{hx(32)}.r2.cloudflarestorage.com"\nbucket = "acme-artifacts"',
    )
    ben("backblaze_bucket_id", f"b2 ls b2://acme-backups --recursive | head\nbucketId: {hx(24)}")
    ben(
        "tailscale_node_key_public",
        f'# tailscale status --json | jq .Self.PublicKey\n"nodekey:{hx(64)}"',
    )
    ben(
        "tailscale_ts_device_id",
        f"Device n{r(10)}CNTRL (web-03.tail{hx(4)}.ts.net) approved; key expiry disabled",
    )
    ben(
        "wireguard_public_keys_peer",
        f"[Peer]\nPublicKey = {b64(rbytes(32))}\nAllowedIPs = 10.8.0.2/32\nEndpoint = vpn.acme.io:51820",
    )
    ben("consul_service_id", f"consul services register -name=api -id=api-{uid()} -port=8080")
    ben(
        "nomad_alloc_ids",
        f"ID        Node ID   Task Group  Version  Desired  Status   Created\n{hx(8)}  {hx(8)}  api         42       run      running  3m ago",
    )
    ben(
        "k8s_uids_resource_versions",
        f'metadata:\n  name: api-7c9f8d6b5-x2kqp\n  uid: {uid()}\n  resourceVersion: "{rng.randint(10**7, 10**8)}"',
    )
    ben(
        "k8s_secret_key_ref",
        "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: billing-db\n        key: password",
    )
    ben(
        "external_secret_spec",
        "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nspec:\n  secretStoreRef: {name: vault, kind: ClusterSecretStore}\n  data:\n    - secretKey: password\n      remoteRef: {key: apps/billing, property: db_password}",
    )
    ben(
        "sealed_secret_ciphertext",
        f"apiVersion: bitnami.com/v1alpha1\nkind: SealedSecret\nspec:\n  encryptedData:\n    password: Ag{b64(rbytes(300))}",
    )
    ben(
        "sops_encrypted_value",
        f"db_password: ENC[AES256_GCM,data:{b64(rbytes(18))},iv:{b64(rbytes(32))},tag:{b64(rbytes(16))},type:str]\nsops:\n    age:\n        - recipient: {bech32('age', rbytes(32))}",
    )
    ben(
        "ansible_vault_ciphertext",
        "db_password: !vault |\n          $ANSIBLE_VAULT;1.1;AES256\n          "
        + "\n          ".join(hx(80) for _ in range(4)),
    )
    ben(
        "age_armored_ciphertext",
        "-----BEGIN AGE ENCRYPTED FILE-----\n"
        + "\n".join(b64(rbytes(48)) for _ in range(4))
        + "\n-----END AGE ENCRYPTED FILE-----",
    )
    ben("docker_image_digest", f"FROM python:3.12.8-slim-bookworm@sha256:{hx(64)}")
    ben(
        "buildkit_step_digests",
        f"#7 [build 3/6] COPY pyproject.toml uv.lock ./\n#7 sha256:{hx(64)} 1.2kB / 1.2kB done\n#7 DONE 0.1s",
    )
    ben(
        "terraform_plan_sensitive_mask",
        '  # aws_db_instance.main will be updated in-place\n  ~ resource "aws_db_instance" "main" {\n      ~ password = (sensitive value)\n        id       = "billing-prod"\n    }',
    )
    ben(
        "terraform_state_non_sensitive",
        json.dumps(
            {
                "type": "aws_s3_bucket",
                "instances": [
                    {
                        "attributes": {
                            "arn": "arn:aws:s3:::acme-artifacts",
                            "bucket": "acme-artifacts",
                            "id": "acme-artifacts",
                            "hosted_zone_id": "Z1BKCTXD74EZPE",
                        },
                        "sensitive_attributes": [],
                    }
                ],
            }
        ),
    )
    ben(
        "kubeconfig_ca_data_exec",
        f"clusters:\n- cluster:\n    certificate-authority-data: {_cert_b64()}\n    server: https://k8s.acme.io:6443\nusers:\n- name: eks\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: aws\n      args: [eks, get-token, --cluster-name, prod]",
    )
    ben(
        "openshift_token_prefix_docs",
        "OpenShift OAuth access tokens now start with `sha256~`; `oc whoami -t` prints yours. Never paste it in tickets.",
    )
    ben(
        "rancher_cluster_ids",
        "rancher context switch c-m-7x2k9:p-4qz8t\nCluster: prod-eu (c-m-7x2k9)  Project: Default (p-4qz8t)",
    )
    ben(
        "vault_kv_get_field_command",
        "vault kv get -mount=secret -field=db_password apps/billing | kubectl create secret generic billing-db --from-file=password=/dev/stdin",
    )
    ben(
        "cloudflared_tunnel_uuid_config",
        f"tunnel: {uid()}\ncredentials-file: /etc/cloudflared/{uid()}.json\ningress:\n  - hostname: grafana.acme.io\n    service: http://localhost:3000",
    )
    section("vendor: data, ML and AI tools")
    ben(
        "model_ids_and_versions",
        "claude-sonnet-4-5-20250929, gpt-5.1-codex, gemini-2.5-pro, qwen3-coder-480b-a35b, llama-3.3-70b-versatile",
    )
    ben(
        "hf_commit_sha_revision",
        f'model = AutoModel.from_pretrained("acme/ranker-v3", revision="{hx(40)}")',
    )
    ben(
        "wandb_run_id",
        f"wandb: Syncing run dainty-sundial-42\nwandb: ⭐️ View project at https://wandb.ai/acme/ranker\nwandb: 🚀 View run at https://wandb.ai/acme/ranker/runs/{r(8, LOWER)}\nwandb: Run data is saved locally in ./wandb/run-20261202_104512-{r(8, LOWER)}",
    )
    ben("mlflow_run_id", f"mlflow runs describe --run-id {hx(32)} | jq .data.metrics")
    ben(
        "dataset_sha256_manifest",
        "\n".join(f"{hx(64)}  data/shard-{i:05d}.parquet" for i in range(3)),
    )
    ben(
        "fal_request_id",
        f"fal: request {uid()} queued (position 3), status_url=https://queue.fal.run/fal-ai/flux/requests/{uid()}/status",
    )
    ben(
        "openai_ids_not_keys",
        f"response id resp_{hx(48)}\nfile id file-{r(22)}\nbatch id batch_{hx(32)}",
    )
    ben(
        "anthropic_message_id",
        f'{{"id":"msg_01{r(22)}","type":"message","model":"claude-sonnet-4-5","usage":{{"input_tokens":812,"output_tokens":431}}}}',
    )
    ben(
        "api_key_placeholders_env_example",
        "# .env.example\nCEREBRAS_API_KEY=csk-your-key-here\nNEON_API_KEY=napi_...\nFIRECRAWL_API_KEY=fc-YOUR_API_KEY\nE2B_API_KEY=<your e2b key>\nLLAMA_CLOUD_API_KEY=llx-xxxxxxxxxxxxxxxx",
    )
    ben(
        "masked_key_last_four",
        "Active keys:\n  prod-backend   sk-proj-...R2xQ   created 2026-10-01\n  ci-evals       sk-proj-...9fLk   created 2026-11-12",
    )
    ben(
        "splunk_hec_docs_token_var",
        'curl -k https://splunk:8088/services/collector -H "Authorization: Splunk $HEC_TOKEN" -d \'{"event":"hello"}\'',
    )
    ben(
        "elastic_cloud_id_public",
        f'cloud.id: "acme-prod:{b64("europe-west1.gcp.cloud.es.io:443$" + hx(32) + "$" + hx(32))}"\ncloud.auth: "${{ES_USER}}:${{ES_PASSWORD}}"',
    )
    ben("sentry_event_ids", f"Sentry event {hx(32)} (issue ACME-API-4KT) — trace {hx(32)}")
    ben(
        "traceparent_header",
        f"traceparent: 00-{hx(32)}-{hx(16)}-01\ntracestate: rojo=00f067aa0ba902b7",
    )
    section("vendor: SaaS, payments, messaging")
    ben(
        "stripe_object_ids",
        f"Refunded ch_3{r(23)} for cus_{r(14)} (payment_intent pi_3{r(23)}, event evt_1{r(23)})",
    )
    ben(
        "stripe_publishable_key_frontend",
        f"const stripe = Stripe('pk_live_51{r(97)}');  // publishable: meant for the browser",
    )
    ben(
        "stripe_docs_test_key",
        "Use the test key from the docs (`sk_test_4eC39HqLyjWDarjtT1zdp7dc`) to follow along; it only works against the docs' sandbox account.",
    )
    ben(
        "twilio_account_sid_and_messaging_sid",
        f"TWILIO_ACCOUNT_SID=AC{hx(32)}\nTWILIO_MESSAGING_SERVICE_SID=MG{hx(32)}\nTWILIO_AUTH_TOKEN=${{TWILIO_AUTH_TOKEN}}",
    )
    ben("sendgrid_template_id", f'template_id = "d-{hx(32)}"  # welcome email v3')
    ben(
        "slack_ids_and_ts",
        f"channel C0{r(9, UPPER)} user U0{r(9, UPPER)} ts 1764660812.{r(6, DIGITS)} thread_ts 1764660800.{r(6, DIGITS)}",
    )
    ben(
        "slack_webhook_docs_placeholder",
        "SLACK_WEBHOOK_URL=https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
    )
    ben("recaptcha_site_key", f'<div class="g-recaptcha" data-sitekey="6L{r(38, B64URL)}"></div>')
    ben("hcaptcha_sitekey", f'<div class="h-captcha" data-sitekey="{uid()}"></div>')
    ben("ga_gtm_ids", f"gtag('config', 'G-{r(10, UPPER)}'); // GTM-{r(7, UPPER)}")
    ben(
        "mapbox_public_token",
        f"mapboxgl.accessToken = 'pk.{b64url(json.dumps({'u': 'acme', 'a': r(10, LOWER)}))}.{r(22, B64URL)}'; // public, URL-restricted",
    )
    ben(
        "hubspot_portal_ids",
        f'<script src="//js.hs-scripts.com/{r(8, DIGITS)}.js"></script>\nformId: "{uid()}"',
    )
    ben(
        "salesforce_record_ids",
        f"Opportunity 006{r(15, ALNUM)} owned by 005{r(15, ALNUM)} in org 00D{r(15, ALNUM)}",
    )
    ben(
        "paypal_order_and_payer_ids",
        f"PayPal order {r(17, UPPER)} captured; payer {r(13, UPPER)}; capture id {r(17, UPPER)}",
    )
    ben(
        "woocommerce_keys_docs",
        "WooCommerce REST keys come in pairs: a consumer key (`ck_…`) and a consumer secret (`cs_…`). Generate them under WooCommerce → Settings → Advanced → REST API.",
    )
    ben(
        "ghost_content_api_key_public",
        f"const api = new GhostContentAPI({{ url: 'https://blog.acme.io', key: '{hx(26)}', version: 'v5.0' }}); // Content API key: public, read-only",
    )
    ben(
        "line_channel_id",
        f"LINE_CHANNEL_ID={r(10, DIGITS)}\nLINE_CHANNEL_SECRET=${{LINE_CHANNEL_SECRET}}",
    )
    ben(
        "pubnub_publish_subscribe_keys",
        f"pnconfig.publish_key = 'pub-c-{uid()}'\npnconfig.subscribe_key = 'sub-c-{uid()}'\n# the secret key stays on the server; not in the client",
    )
    ben("deepl_glossary_id", f'glossary_id = "{uid()}"  # en→de product terms')
    ben(
        "launchdarkly_client_side_id",
        f"const client = LDClient.initialize('{hx(24)}', context); // client-side ID, safe in the browser",
    )
    ben("nostr_npub_public", f"Follow our release bot: {bech32('npub', rbytes(32))}")
    section("vendor: private keys and key files")
    ben(
        "ssh_ed25519_public_authorized_keys",
        f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{b64(rbytes(32))[:43]} deploy@ci",
    )
    ben(
        "ssh_rsa_public_known_hosts",
        f"github.com ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ{b64(rbytes(380))}",
    )
    ben(
        "minisign_public_key",
        f"untrusted comment: minisign public key {hx(16).upper()}\nRWQ{b64(rbytes(40))[:53]}",
    )
    ben(
        "signify_public_key",
        f"untrusted comment: signify public key\nRWRCSwAAAA{b64(rbytes(33))[:46]}",
    )
    ben(
        "pgp_public_key_block",
        "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n"
        + "\n".join(b64(rbytes(48)) for _ in range(6))
        + f"\n={b64(rbytes(3))}\n-----END PGP PUBLIC KEY BLOCK-----",
    )
    ben(
        "pgp_signature_in_commit",
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n "
        + "\n ".join(b64(rbytes(48)) for _ in range(5))
        + "\n -----END PGP SIGNATURE-----",
    )
    ben("x509_certificate_pem", pem("CERTIFICATE", 900))
    ben("csr_pem", pem("CERTIFICATE REQUEST", 500))
    ben("public_key_pem", pem("PUBLIC KEY", 294))
    ben(
        "jwks_public_only",
        json.dumps(
            {
                "keys": [
                    {
                        "kty": "RSA",
                        "use": "sig",
                        "kid": "2026-11",
                        "alg": "RS256",
                        "n": b64url(rbytes(256)),
                        "e": "AQAB",
                    }
                ]
            }
        ),
    )
    ben(
        "jwk_ed25519_public_only",
        json.dumps({"kty": "OKP", "crv": "Ed25519", "x": b64url(rbytes(32)), "kid": "sig-2026-11"}),
    )
    ben(
        "cert_fingerprints",
        f"SHA256 Fingerprint={':'.join(hx(2).upper() for _ in range(32))}\nSerial Number: {':'.join(hx(2) for _ in range(16))}",
    )
    ben(
        "ssh_host_key_fingerprint",
        f"ED25519 key fingerprint is SHA256:{b64(rbytes(32))[:43]}.\nThis key is not known by any other names.",
    )
    ben(
        "dkim_txt_record_public",
        f'selector1._domainkey.acme.io. 3600 IN TXT "v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA{b64(rbytes(200))}"',
    )
    ben(
        "age_recipient_public",
        f"# .sops.yaml\ncreation_rules:\n  - path_regex: secrets/.*\\.yaml$\n    age: {bech32('age', rbytes(32))}",
    )
    ben(
        "cosign_public_key_verify",
        "cosign verify --key cosign.pub registry.acme.io/api@sha256:" + hx(64),
    )
    ben(
        "android_signing_sha1",
        f"Certificate fingerprints:\n\t SHA1: {':'.join(hx(2).upper() for _ in range(20))}\n\t SHA256: {':'.join(hx(2).upper() for _ in range(32))}",
    )


def benign_contexts() -> None:  # noqa: PLR0915
    section("context: AI coding-agent configs and transcripts")
    ben(
        "codex_config_env_reference",
        '[mcp_servers.docs]\ncommand = "npx"\nargs = ["-y", "@acme/docs-mcp"]\nenv_vars = ["ANTHROPIC_API_KEY"]  # forwarded from the shell, never written here',
    )
    ben(
        "gemini_settings_env_interpolation",
        json.dumps(
            {
                "mcpServers": {
                    "github": {
                        "command": "npx",
                        "args": ["-y", "@modelcontextprotocol/server-github"],
                        "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "$GITHUB_TOKEN"},
                    }
                }
            },
            indent=2,
        ),
    )
    ben(
        "vscode_mcp_inputs_prompt",
        json.dumps(
            {
                "inputs": [
                    {
                        "type": "promptString",
                        "id": "gh-token",
                        "description": "GitHub token",
                        "password": True,
                    }
                ],
                "servers": {
                    "github": {
                        "type": "http",
                        "url": "https://api.githubcopilot.com/mcp/",
                        "headers": {"Authorization": "Bearer ${input:gh-token}"},
                    }
                },
            },
            indent=2,
        ),
    )
    ben(
        "claude_mcp_add_env_reference",
        'claude mcp add --transport stdio jira --env JIRA_API_TOKEN="$JIRA_API_TOKEN" -- uvx mcp-atlassian',
    )
    ben(
        "litellm_os_environ_refs",
        "model_list:\n  - model_name: gpt\n    litellm_params:\n      model: openai/gpt-5.1\n      api_key: os.environ/OPENAI_API_KEY\ngeneral_settings:\n  master_key: os.environ/LITELLM_MASTER_KEY",
    )
    ben(
        "claude_jsonl_tool_use_ids",
        json.dumps(
            {
                "type": "assistant",
                "message": {
                    "id": "msg_01" + r(22),
                    "content": [
                        {
                            "type": "tool_use",
                            "id": "toolu_01" + r(22),
                            "name": "Bash",
                            "input": {"command": "git status --short"},
                        }
                    ],
                },
                "uuid": uid(),
                "sessionId": uid(),
            }
        ),
    )
    ben(
        "codex_rollout_session_meta",
        json.dumps(
            {
                "type": "session_meta",
                "payload": {
                    "id": uid(),
                    "cwd": "/home/kdm/src/gitvault",
                    "originator": "codex_cli_rs",
                    "cli_version": "0.63.0",
                    "git": {"commit_hash": hx(40), "branch": "main"},
                },
            }
        ),
    )
    ben(
        "agent_memory_rotation_note",
        '# CLAUDE.md\n\n## Secrets\n- Never print tokens. The npm automation token lives in 1Password ("npm publish – acme"); CI reads it from `NPM_TOKEN`.',
    )
    ben(
        "aider_history_redacted",
        "#### /run export GROQ_API_KEY=$(op read op://Dev/groq/credential) && aider --model groq/llama-3.3-70b",
    )
    ben(
        "user_prompt_mentions_key_name",
        "> the OPENAI_API_KEY env var isn't being picked up in the worker container, can you check the compose file?",
    )
    ben(
        "agent_plan_references_only",
        "Plan:\n1. ssh deploy@10.0.4.12 (key ~/.ssh/deploy_ed25519)\n2. restart the worker\n3. tail the logs",
    )
    ben(
        "continue_config_secrets_syntax",
        "models:\n  - name: grok\n    provider: xai\n    model: grok-4\n    apiKey: ${{ secrets.XAI_API_KEY }}",
    )
    ben(
        "opencode_config_env_syntax",
        json.dumps({"provider": {"cerebras": {"options": {"apiKey": "{env:CEREBRAS_API_KEY}"}}}}),
    )
    section("context: config files of many formats")
    ben(
        "hocon_env_substitution",
        "db.default {\n  url = ${?DATABASE_URL}\n  username = ${?DB_USER}\n  password = ${?DB_PASSWORD}\n}",
    )
    ben(
        "cue_password_constraint",
        'database: {\n\tuser:     string\n\tpassword: string & =~"^.{16,}$"  // injected at deploy time\n}',
    )
    ben(
        "nix_hashed_password",
        f'users.users.deploy.hashedPassword = "$6${r(16, ALNUM + "./")}${r(86, ALNUM + "./")}";',
    )
    ben(
        "nix_password_file",
        'services.grafana.settings.security.admin_password = "$__file{/run/agenix/grafana-admin}";',
    )
    ben(
        "elixir_runtime_env_fetch",
        'config :acme, Acme.Repo,\n  username: System.fetch_env!("DB_USER"),\n  password: System.fetch_env!("DB_PASSWORD"),\n  pool_size: 15',
    )
    ben(
        "spring_security_bcrypt_password",
        f"spring.security.user.name=actuator\nspring.security.user.password={{bcrypt}}$2a$10${r(53, ALNUM + './')}",
    )
    ben(
        "jetbrains_http_public_env",
        json.dumps({"prod": {"host": "https://api.acme.io", "username": "qa-bot"}}, indent=2),
    )
    ben(
        "postman_env_secret_empty",
        json.dumps(
            {
                "name": "prod",
                "values": [
                    {"key": "baseUrl", "value": "https://api.acme.io", "enabled": True},
                    {"key": "adminPassword", "value": "", "type": "secret", "enabled": True},
                ],
            }
        ),
    )
    ben(
        "playwright_storage_state_non_auth",
        json.dumps(
            {
                "cookies": [
                    {
                        "name": "cookie_consent",
                        "value": "accepted",
                        "domain": "app.acme.io",
                        "path": "/",
                    }
                ],
                "origins": [
                    {
                        "origin": "https://app.acme.io",
                        "localStorage": [{"name": "theme", "value": "dark"}],
                    }
                ],
            }
        ),
    )
    ben(
        "fish_variables_non_secret",
        "# This file contains fish universal variable definitions.\nSETUVAR __fish_initialized:3800\nSETUVAR --export EDITOR:nvim\nSETUVAR fish_color_command:blue",
    )
    ben(
        "msmtprc_passwordeval",
        'account acme\nhost smtp.acme.io\nport 587\nauth on\nuser alerts@acme.io\npasswordeval "pass show mail/acme"\ntls on',
    )
    ben(
        "mbsyncrc_passcmd",
        'IMAPAccount work\nHost outlook.office365.com\nUser kdm@acme.io\nPassCmd "secret-tool lookup host outlook.office365.com"\nSSLType IMAPS',
    )
    ben(
        "fstab_cifs_credentials_file",
        "//nas.acme.lan/media  /mnt/media  cifs  credentials=/root/.smbcredentials,uid=1000,vers=3.0  0  0",
    )
    ben(
        "slapd_rootpw_ssha",
        f'rootdn    "cn=admin,dc=acme,dc=io"\nrootpw    {{SSHA}}{b64(rbytes(24))}',
    )
    ben(
        "dovecot_passwd_file_argon",
        f"kdm@acme.io:{{ARGON2ID}}$argon2id$v=19$m=65536,t=3,p=1${b64(rbytes(16)).rstrip('=')}${b64(rbytes(32)).rstrip('=')}:5000:5000::/var/vmail/acme.io/kdm",
    )
    ben(
        "postgres_scram_verifier",
        f"rolpassword | SCRAM-SHA-256$4096:{b64(rbytes(16))}${b64(rbytes(32))}:{b64(rbytes(32))}",
    )
    ben("htpasswd_bcrypt_line", f"admin:$2y$05${r(53, ALNUM + './')}")
    ben(
        "shadow_line_hash",
        f"deploy:$y$j9T${r(22, ALNUM + './')}${r(43, ALNUM + './')}:20058:0:99999:7:::",
    )
    ben(
        "hostapd_sae_password_file",
        "interface=wlan0\nssid=acme-guest\nwpa=2\nwpa_key_mgmt=SAE\nsae_password_file=/etc/hostapd/sae.passwords",
    )
    ben(
        "gradle_signing_from_properties",
        "signingConfigs {\n    release {\n        storeFile file(keystoreProperties['storeFile'])\n        storePassword keystoreProperties['storePassword']\n        keyAlias keystoreProperties['keyAlias']\n        keyPassword keystoreProperties['keyPassword']\n    }\n}",
    )
    section("context: CI, IaC, Terraform state, kubeconfigs")
    ben(
        "bicepparam_getsecret",
        "using './main.bicep'\n\nparam adminUsername = 'azureuser'\nparam adminPassword = az.getSecret('<sub-id>', 'rg-shared', 'acme-kv', 'vm-admin-password')",
    )
    ben(
        "cloudformation_dynamic_reference",
        "MasterUserPassword: '{{resolve:secretsmanager:prod/billing/db:SecretString:password}}'",
    )
    ben(
        "serverless_ssm_reference",
        "provider:\n  environment:\n    DB_PASS: ${ssm:/prod/billing/db-password}",
    )
    ben(
        "taskfile_dotenv",
        "version: '3'\ndotenv: ['.env']\ntasks:\n  push:\n    cmds: [echo \"$REGISTRY_PASS\" | docker login registry.acme.io -u ci --password-stdin]",
    )
    ben("travis_secure_env", f'env:\n  global:\n    - secure: "{b64(rbytes(256))}"')
    ben(
        "drone_from_secret",
        "environment:\n  DATABASE_PASSWORD:\n    from_secret: database_password",
    )
    ben(
        "bitrise_secret_reference",
        "app:\n  envs:\n  - KEYCHAIN_PASSWORD: $BITRISE_KEYCHAIN_PASSWORD\n    opts:\n      is_expand: true",
    )
    ben(
        "argo_workflow_secret_ref",
        "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef: {name: db, key: password}",
    )
    ben(
        "docker_build_secret_mount",
        "docker build --secret id=npmrc,src=$HOME/.npmrc -t acme/web:4.2.0 .\n# RUN --mount=type=secret,id=npmrc,target=/root/.npmrc npm ci",
    )
    ben(
        "kubectl_docker_registry_from_file",
        "kubectl create secret generic regcred --from-file=.dockerconfigjson=$HOME/.docker/config.json --type=kubernetes.io/dockerconfigjson",
    )
    ben(
        "terraform_random_password_resource",
        'resource "random_password" "db" {\n  length  = 24\n  special = true\n}\n\noutput "db_password" {\n  value     = random_password.db.result\n  sensitive = true\n}',
    )
    ben(
        "tfstate_lineage_serial",
        json.dumps(
            {
                "version": 4,
                "terraform_version": "1.9.8",
                "serial": 118,
                "lineage": uid(),
                "outputs": {
                    "db_password": {"value": "(sensitive)", "type": "string", "sensitive": True}
                },
            }
        ),
    )
    section("context: config files of many formats")
    ben(
        "kong_keyauth_from_vault",
        'consumers:\n  - username: partner-a\n    keyauth_credentials:\n      - key: "{vault://env/partner-a-key}"',
    )
    ben("wifi_qr_open_network", "WIFI:T:nopass;S:Acme Guest;;")
    section("context: netrc-likes and tool credential files")
    ben(
        "netrc_placeholder_password",
        "machine api.acme.io\n  login ci-bot\n  password ${ACME_API_TOKEN}",
    )
    ben(
        "npmrc_env_interpolation",
        "@acme:registry=https://npm.pkg.github.com\n//npm.pkg.github.com/:_authToken=${NODE_AUTH_TOKEN}\nalways-auth=true",
    )
    ben(
        "pypirc_token_username_only",
        "[distutils]\nindex-servers = pypi\n\n[pypi]\nusername = __token__\n# password comes from keyring",
    )
    ben(
        "pgpass_wildcard_comment",
        "# hostname:port:database:username:password\n# one line per database; file mode must be 0600\n",
    )
    ben(
        "hgrc_auth_no_password",
        "[auth]\nacme.prefix = https://hg.acme.io/\nacme.username = kdm\nacme.schemes = https",
    )
    ben("curlrc_no_credentials", "# ~/.curlrc\nsilent\nshow-error\nretry = 3\nconnect-timeout = 10")
    ben(
        "snowsql_authenticator_sso",
        "[connections.prod]\naccountname = acme-xy12345\nusername = ANALYST\nauthenticator = externalbrowser",
    )
    ben(
        "condarc_public_channels",
        "channels:\n  - conda-forge\n  - bioconda\nchannel_priority: strict",
    )
    ben(
        "uv_index_url_public",
        '[[tool.uv.index]]\nname = "pytorch-cu124"\nurl = "https://download.pytorch.org/whl/cu124"\nexplicit = true',
    )
    ben(
        "bunfig_env_token",
        '[install.scopes]\n"@acme" = { token = "$NPM_TOKEN", url = "https://registry.npmjs.org/" }',
    )
    ben(
        "cargo_credential_provider",
        '[registry]\nglobal-credential-providers = ["cargo:token", "cargo:libsecret"]',
    )
    ben(
        "docker_config_creds_store",
        json.dumps(
            {
                "auths": {"registry.acme.io": {}},
                "credsStore": "osxkeychain",
                "credHelpers": {"123456789012.dkr.ecr.eu-west-1.amazonaws.com": "ecr-login"},
            },
            indent=2,
        ),
    )
    ben(
        "helm_registry_login_stdin",
        "echo \"$HARBOR_ROBOT_SECRET\" | helm registry login registry.acme.io --username 'robot$ci+push' --password-stdin",
    )
    ben("vault_kv_put_from_file", "vault kv put -mount=secret apps/billing db_password=@/dev/stdin")
    ben(
        "op_inject_template",
        "DB_PASSWORD={{ op://Ops/Staging DB/password }}\nSTRIPE_KEY={{ op://Ops/Stripe/credential }}",
    )
    ben(
        "security_find_generic_password",
        "security find-generic-password -a kdm -s acme-vpn -w | pbcopy",
    )
    ben(
        "notarytool_keychain_profile",
        'xcrun notarytool submit Acme.zip --keychain-profile "AC_NOTARY" --wait',
    )
    ben(
        "apksigner_ks_pass_env",
        "apksigner sign --ks release.jks --ks-key-alias upload --ks-pass env:KS_PASS app-release-unsigned.apk",
    )
    section("context: CLI invocations and shell history")
    ben(
        "xfreerdp_prompt_password",
        "xfreerdp /v:ts01.acme.lan /u:ACME\\\\kdm /from-stdin /dynamic-resolution +clipboard",
    )
    ben(
        "ipmitool_env_password",
        "IPMI_PASSWORD=$(pass show bmc/r740) ipmitool -I lanplus -H 10.20.0.15 -U ADMIN -E chassis status",
    )
    ben("mysql_login_path", "mysql --login-path=reporting -e 'SELECT COUNT(*) FROM orders'")
    ben("kinit_keytab", "kinit -kt /etc/security/keytabs/hadoop.service.keytab svc_hadoop@ACME.IO")
    ben(
        "bash_history_benign",
        "#1764660512\ncd ~/src/billing\n#1764660520\ngit pull --rebase\n#1764660533\n./manage.py migrate --plan",
    )
    ben(
        "psql_history_benign",
        "\\c billing\nSELECT id, email, created_at FROM users ORDER BY id DESC LIMIT 20;\n\\q",
    )
    ben(
        "ps_output_password_file_arg",
        "kdm  41220  2.1  0.4 /usr/bin/java -jar keycloak.jar start --db-password-file=/run/secrets/kc-db --hostname=id.acme.io",
    )
    ben(
        "sudo_journal_benign",
        "Dec 02 10:12:44 web03 sudo[8812]:      kdm : TTY=pts/1 ; PWD=/home/kdm ; USER=root ; COMMAND=/usr/bin/systemctl restart nginx",
    )
    ben(
        "openssl_rand_command_only",
        "openssl rand -base64 32 > /run/secrets/session_key && chmod 600 /run/secrets/session_key",
    )
    ben(
        "ssh_keygen_output_randomart",
        f"Your public key has been saved in /home/kdm/.ssh/id_ed25519.pub\nThe key fingerprint is:\nSHA256:{b64(rbytes(32))[:43]} kdm@laptop",
    )
    section("context: CI logs, stack traces, protocol dumps")
    ben(
        "gha_masked_output",
        "Run ./deploy.sh\n  ./deploy.sh\n  shell: /usr/bin/bash -e {0}\n  env:\n    DEPLOY_TOKEN: ***\nDeploying 4.2.0 with token ***",
    )
    ben(
        "gha_cache_key",
        f"Cache restored from key: Linux-uv-{hx(64)}\nCache Size: ~212 MB (222298112 B)",
    )
    ben(
        "kubectl_v9_without_auth",
        'I1202 10:11:12.123456  4242 round_trippers.go:466] curl -v -XGET  -H "Accept: application/json" -H "User-Agent: kubectl/v1.31.2" \'https://10.96.0.1:443/api/v1/namespaces/default/pods?limit=500\'',
    )
    ben(
        "spring_boot_bind_failure_masked",
        "Failed to bind properties under 'spring.datasource.url' to java.lang.String:\n\n    Property: spring.datasource.url\n    Value: \"jdbc:postgresql://db:5432/app\"\n    Origin: class path resource [application.yml] - 3:10",
    )
    ben(
        "sqlalchemy_url_masked",
        'sqlalchemy.exc.OperationalError: (psycopg.OperationalError) connection failed: FATAL:  password authentication failed for user "app"\n(Background on this error at: https://sqlalche.me/e/20/e3q8)\nengine url: postgresql+psycopg://app:***@db:5432/app',
    )
    ben(
        "pip_index_url_masked",
        "Looking in indexes: https://pypi.org/simple, https://ci:****@nexus.acme.io/repository/pypi/simple",
    )
    ben(
        "node_error_no_config",
        "Error: connect ECONNREFUSED 10.0.0.7:5432\n    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1607:16) {\n  errno: -111,\n  code: 'ECONNREFUSED',\n  syscall: 'connect',\n  address: '10.0.0.7',\n  port: 5432\n}",
    )
    ben(
        "go_panic_addresses",
        f"panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x{hx(6)}]\n\ngoroutine 42 [running]:\nmain.(*Server).handle(0xc000{hx(6)}, {{0x{hx(6)}, 0xc000{hx(6)}}})",
    )
    ben(
        "smtp_transcript_without_auth",
        f"S: 220 smtp.acme.io ESMTP\nC: EHLO build01\nS: 250-STARTTLS\nC: MAIL FROM:<ci@acme.io>\nS: 250 2.1.0 Ok\nS: 250 2.0.0 Ok: queued as {r(10, UPPER)}",
    )
    ben(
        "smtp_auth_login_prompts_only",
        "S: 334 VXNlcm5hbWU6\nS: 334 UGFzc3dvcmQ6\nS: 535 5.7.8 Error: authentication failed: authentication failure",
    )
    ben(
        "dkim_signature_header",
        f"DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=acme.io; s=selector1; h=from:to:subject:date; bh={b64(rbytes(32))}; b={b64(rbytes(256))}",
    )
    ben(
        "websocket_key_accept",
        f"Sec-WebSocket-Key: {b64(rbytes(16))}\nSec-WebSocket-Accept: {b64(rbytes(20))}",
    )
    ben(
        "oauth_pkce_challenge_state",
        f"GET /authorize?response_type=code&client_id=web&code_challenge={b64url(rbytes(32))}&code_challenge_method=S256&state={r(24, B64URL)} HTTP/1.1",
    )
    ben(
        "www_authenticate_error",
        'HTTP/1.1 401 Unauthorized\nWWW-Authenticate: Bearer realm="api", error="invalid_token", error_description="The access token expired"',
    )
    ben(
        "http_etag_digest_headers",
        f'ETag: "{hx(32)}"\nDigest: sha-256={b64(rbytes(32))}\nX-Request-Id: {uid()}',
    )
    ben(
        "ga_cookie_values",
        f"Cookie: _ga=GA1.1.{r(9, DIGITS)}.1764660000; _ga_{r(10, UPPER)}=GS1.1.1764660000.3.1.1764660812.0.0.0; theme=dark",
    )
    ben(
        "mqtt_connect_no_password",
        "MQ Telemetry Transport Protocol, Connect Command\n    Protocol Name: MQTT\n    Client ID: sensor-17\n    Connect Flags: 0x02, QoS Level: At most once delivery, Clean Session Flag",
    )
    ben(
        "openssl_s_client_session_id",
        f"SSL-Session:\n    Protocol  : TLSv1.3\n    Cipher    : TLS_AES_256_GCM_SHA384\n    Session-ID: {hx(64).upper()}\n    Verify return code: 0 (ok)",
    )
    ben(
        "form_body_without_password",
        "POST /search HTTP/1.1\nContent-Type: application/x-www-form-urlencoded\n\nq=password%20reset%20email&page=2&sort=recent",
    )


def benign_prose_code_exports() -> None:  # noqa: PLR0915
    section("context: chat and prose in several languages")
    for name, text in (
        (
            "czech",
            "Heslo k testovací databázi je v trezoru Bitwarden pod „Staging DB“, neposílej ho chatem.",
        ),
        (
            "greek",
            "Ο κωδικός για το staging βρίσκεται στο 1Password, στο αντικείμενο «Staging DB».",
        ),
        ("hebrew", "הסיסמה לשרת הבדיקות נמצאת בכספת, תבקש גישה מהצוות."),
        ("thai", "รหัสผ่านของเซิร์ฟเวอร์ทดสอบอยู่ใน Vault ขอสิทธิ์จากทีม infra นะ"),
        (
            "finnish",
            "Testipalvelimen salasana on holvissa kohdassa staging/db, älä kopioi sitä chattiin.",
        ),
        ("danish", "Adgangskoden til staging ligger i 1Password under »Staging DB«."),
        ("norwegian", "Passordet til byggserveren er byttet; hent det nye fra Vault."),
        ("hungarian", "A teszt adatbázis jelszava a széfben van, a „Staging DB” bejegyzésnél."),
        ("romanian", "Parola pentru mediul de test e în seif; cere acces de la echipa de infra."),
        ("persian", "رمز عبور سرور تست در گاوصندوق تیم است؛ از تیم زیرساخت دسترسی بگیر."),
        ("bengali", "স্টেজিং সার্ভারের পাসওয়ার্ড ভল্টে আছে, infra টিমের কাছে অ্যাক্সেস চাও।"),
        ("tagalog", "Nasa vault ang password ng staging server; humingi ng access sa infra team."),
        (
            "swahili",
            "Nenosiri la seva ya majaribio liko kwenye vault; omba ruhusa kwa timu ya infra.",
        ),
        (
            "catalan",
            "La contrasenya del servidor de proves és a la caixa forta, a l'entrada «Staging DB».",
        ),
        ("serbian_cyrillic", "Лозинка за тест сервер је у трезору, под ставком „Staging DB“."),
        (
            "malay",
            "Kata laluan pelayan ujian disimpan dalam vault; minta akses daripada pasukan infra.",
        ),
    ):
        ben(f"{name}_reference", text)
    ben(
        "password_policy_prose",
        "Passwords must be at least 14 characters and are checked against the breached-password list; tokens expire after 90 days.",
    )
    ben(
        "rotate_prose_no_value",
        "Rotated the Stripe restricted key and the Slack bot token after the offboarding; old ones revoked at 10:42 UTC.",
    )
    ben(
        "whatsapp_export_benign",
        '[02/12/26, 10:41:05] Ana Ruiz: el wifi de la oficina nueva es "Acme-5G"\n[02/12/26, 10:41:22] Ana Ruiz: la clave está pegada detrás del router',
    )
    ben(
        "zoom_vtt_benign",
        "WEBVTT\n\n00:12:04.120 --> 00:12:09.880\nMarco: ok so for the vendor portal the login is in the shared vault, I'll add you\n\n00:12:10.000 --> 00:12:12.400\nJen: got it",
    )
    ben(
        "email_quoted_reply_benign",
        "> > Can you send me the SFTP login?\n> I've shared it through 1Password (expires in 7 days).\nThanks, that worked.",
    )
    ben(
        "jira_wiki_env_reference",
        "h3. Repro\n{code:bash}\ncurl -u elastic:$ES_PASSWORD https://es.acme.io:9200/_cluster/health\n{code}",
    )
    ben(
        "commit_message_rotation",
        "chore: rotate the registry mirror token\n\nThe old token was revoked in the registry UI; CI reads the new one from MIRROR_TOKEN.\nSigned-off-by: K. D. Mills <kdm@acme.io>",
    )
    ben(
        "commit_message_hash_refs",
        f'Revert "add local settings"\n\nThis reverts commit {hx(40)}.\nReason: settings_local.py belongs in .gitignore.',
    )
    ben(
        "pr_testing_steps_no_creds",
        "## How to test\n1. Log in with the seeded `qa-admin` account (credentials in the team vault)\n2. Open Settings → Billing\n3. Check the invoice list loads",
    )
    ben(
        "i18n_password_labels",
        json.dumps(
            {
                "login.password": "Contraseña",
                "login.forgot": "¿Olvidaste tu contraseña?",
                "settings.api_key": "Clave de API",
                "settings.regenerate": "Regenerar",
            },
            ensure_ascii=False,
        ),
    )
    ben(
        "error_message_invalid_key",
        "openai.AuthenticationError: Error code: 401 - {'error': {'message': 'Incorrect API key provided: sk-proj-********************************Q2xR.', 'type': 'invalid_request_error', 'code': 'invalid_api_key'}}",
    )
    section("context: code (literals, positional arguments, builders)")
    ben(
        "python_getpass",
        'password = getpass.getpass("Database password: ")\nconn = psycopg.connect(host="pg", user="app", password=password)',
    )
    ben(
        "java_drivermanager_env",
        'Connection c = DriverManager.getConnection(url, System.getenv("DB_USER"), System.getenv("DB_PASSWORD"));',
    )
    ben(
        "rust_basic_auth_env",
        "let res = client.get(url).basic_auth(&cfg.user, Some(&cfg.password)).send().await?;",
    )
    ben(
        "go_ssh_key_auth",
        'config := &ssh.ClientConfig{\n\tUser: "deploy",\n\tAuth: []ssh.AuthMethod{ssh.PublicKeys(signer)},\n\tHostKeyCallback: ssh.FixedHostKey(hostKey),\n}',
    )
    ben(
        "nodemailer_env",
        "const t = nodemailer.createTransport({ host: 'smtp.acme.io', port: 587, auth: { user: process.env.SMTP_USER, pass: process.env.SMTP_PASS } });",
    )
    ben(
        "php_mysqli_getenv",
        "$db = new mysqli(getenv('DB_HOST'), getenv('DB_USER'), getenv('DB_PASS'), 'wordpress');",
    )
    ben(
        "regex_token_pattern",
        'GITHUB_TOKEN_RE = re.compile(r"\\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36}\\b")',
    )
    ben(
        "zod_password_schema",
        "const schema = z.object({ email: z.string().email(), password: z.string().min(14).max(128) });",
    )
    ben(
        "java_value_annotation", '@Value("${spring.datasource.password}")\nprivate String password;'
    )
    ben(
        "csharp_configuration_lookup",
        'var opts = new RabbitMQOptions { HostName = "mq", UserName = cfg["Mq:User"], Password = cfg["Mq:Password"] };',
    )
    ben("python_hash_constant", f'EXPECTED_SHA256 = "{hx(64)}"  # of the vendored wheel')
    ben("js_uuid_constant", f"const TENANT_ID = '{uid()}'; // public tenant identifier")
    ben(
        "swift_keychain_lookup",
        'let password = try Keychain(service: "io.acme.kiosk").get("password")',
    )
    ben(
        "powershell_get_credential",
        "$cred = Get-Credential -UserName 'ACME\\svc' -Message 'Service account'",
    )
    ben(
        "sql_create_user_password_param",
        "CREATE USER etl WITH PASSWORD :'etl_password';  -- psql -v etl_password=... at deploy",
    )
    ben(
        "char_codes_of_header_name",
        'const header = String.fromCharCode(88, 45, 82, 101, 113, 117, 101, 115, 116, 45, 73, 100); // "X-Request-Id"',
    )
    ben("bytes_list_png_magic", "PNG_MAGIC = bytes([137, 80, 78, 71, 13, 10, 26, 10])")
    section("context: test fixtures and notebooks")
    ben(
        "vcr_cassette_filtered",
        "interactions:\n- request:\n    headers:\n      Authorization:\n      - <AUTHORIZATION>\n    method: GET\n    uri: https://api.stripe.com/v1/customers?limit=3",
    )
    ben(
        "wiremock_header_matches_regex",
        json.dumps(
            {
                "request": {
                    "method": "GET",
                    "urlPath": "/v1/orders",
                    "headers": {"X-Api-Key": {"matches": "[A-Za-z0-9_-]{40}"}},
                },
                "response": {"status": 200},
            }
        ),
    )
    ben(
        "pytest_fixture_env_token",
        '@pytest.fixture\ndef gh_token(monkeypatch) -> str:\n    token = os.environ.get("GH_TEST_TOKEN") or pytest.skip("GH_TEST_TOKEN not set")\n    return token',
    )
    ben(
        "factory_fake_password",
        'password = factory.Faker("password", length=16)  # generated per test',
    )
    ben(
        "ipynb_outputs_shapes",
        json.dumps(
            {
                "output_type": "execute_result",
                "data": {"text/plain": ["(48213, 17)"]},
                "execution_count": 4,
            }
        ),
    )
    ben(
        "ipynb_env_magic_non_secret",
        json.dumps(
            {
                "cell_type": "code",
                "source": ["%env CUDA_VISIBLE_DEVICES=0\n", "%env HF_HOME=/data/hf-cache"],
            }
        ),
    )
    ben(
        "ipynb_image_png_output",
        json.dumps(
            {"output_type": "display_data", "data": {"image/png": b64(rbytes(180))}, "metadata": {}}
        ),
    )
    ben(
        "ipynb_getpass_cell",
        json.dumps(
            {
                "cell_type": "code",
                "source": [
                    "from getpass import getpass\n",
                    "os.environ['OPENAI_API_KEY'] = getpass('OpenAI key: ')",
                ],
            }
        ),
    )
    section("context: password-manager and data exports")
    ben(
        "chrome_csv_passkey_row",
        "name,url,username,password,note\naccounts.acme.io,https://accounts.acme.io/,kdm@acme.io,,passkey only",
    )
    ben(
        "bitwarden_csv_header_only",
        "folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp",
    )
    ben(
        "users_csv_no_secrets",
        "id,email,role,created_at\n17,jen@acme.io,admin,2025-03-01\n18,marco@acme.io,viewer,2026-11-30",
    )
    ben(
        "psql_expanded_hash_column",
        f"-[ RECORD 1 ]--+------------------------\nid             | 17\nemail          | jen@acme.io\npassword_hash  | $argon2id$v=19$m=65536,t=3,p=4${b64(rbytes(16)).rstrip('=')}${b64(rbytes(32)).rstrip('=')}",
    )
    ben(
        "ldif_public_attributes",
        "dn: uid=jenkins,ou=svc,dc=acme,dc=io\nobjectClass: inetOrgPerson\nuid: jenkins\ncn:: "
        + b64("Jenkins Dienstkonto für Builds"),
    )
    ben(
        "keepass_csv_notes_only",
        '"Group","Title","Username","Password","URL","Notes"\n"Root/Docs","Wiki","","","https://wiki.acme.lan","SSO login, no local password"',
    )
    section("disguise: split, joined, encoded, escaped")
    ben(
        "base64_of_public_config",
        "CONFIG_B64="
        + b64(json.dumps({"region": "eu-west-1", "replicas": 3, "features": ["search", "sync"]})),
    )
    ben("base64_data_uri_png", f'<img src="data:image/png;base64,{b64(rbytes(96))}" alt="logo">')
    ben(
        "url_encoded_search_query",
        "GET /search?q=how%20to%20rotate%20an%20api%20key%3F&lang=en 200",
    )
    ben(
        "double_url_encoded_redirect_benign",
        "GET /login?next=https%253A%252F%252Fapp.acme.io%252Fsettings%252Ftokens 302",
    )
    ben(
        "quoted_printable_benign",
        "Content-Transfer-Encoding: quoted-printable\n\nThe new release notes are on the wiki; the build took 12 minutes =\nand all 4,211 tests passed. Deployment window: Thursday 10:00=E2=80=9312:00.",
    )
    ben(
        "html_entities_benign",
        "<p>Use &lt;code&gt;gitvault sync&lt;/code&gt; &amp; then &quot;gitvault fold&quot; &#8212; in that order.</p>",
    )
    ben("json_unicode_escapes_benign", json.dumps({"message": "Passwort zurücksetzen — Schritt 2"}))
    ben(
        "hex_dump_elf_header",
        "$ xxd -l 32 build/agent\n00000000: 7f45 4c46 0201 0100 0000 0000 0000 0000  .ELF............\n00000010: 0300 3e00 0100 0000 4011 0000 0000 0000  ..>.....@.......",
    )
    ben(
        "strings_output_benign",
        "$ strings -n 12 build/agent | head -4\nGCC: (GNU) 14.2.1\n/lib64/ld-linux-x86-64.so.2\nX-Agent-Version\nhttps://ingest.acme.io/v1",
    )
    ben("ansi_colored_benign", "\x1b[1;32m✔\x1b[0m 4,211 tests passed in \x1b[1;33m12.4s\x1b[0m")
    ben(
        "diff_version_bump",
        '@@ -3,7 +3,7 @@\n [project]\n name = "acme-billing"\n-version = "4.1.9"\n+version = "4.2.0"\n requires-python = ">=3.11"',
    )
    ben(
        "diff_env_example_rename",
        "--- a/.env.example\n+++ b/.env.example\n-DB_PASS=\n+DB_PASSWORD=\n REDIS_URL=redis://localhost:6379/0",
    )
    ben(
        "git_blame_benign",
        f'{hx(8)} (K. D. Mills 2026-11-30 09:12:44 +0100 17) SMTP_PASSWORD = os.environ["SMTP_PASSWORD"]',
    )
    ben(
        "grep_rn_references",
        "$ grep -rn PASSWORD config/\nconfig/prod.ini:12:password = ${PROD_DB_PASSWORD}\nconfig/dev.ini:12:password = ${DEV_PASSWORD}",
    )
    ben("cat_A_benign", "$ cat -A .env.example\nDB_USER=app$\nDB_PASS=^I<set me>^I$")
    ben("yaml_block_scalar_cert", "tls.crt: |\n  " + pem("CERTIFICATE", 600).replace("\n", "\n  "))
    ben(
        "yaml_folded_description",
        "description: >-\n  Stores the session key id (not the key) and the\n  rotation date for the audit log.",
    )
    ben(
        "toml_multiline_description",
        '[tool.acme]\nnotice = """\\\nTokens are read from the environment; \\\nnothing in this file is secret."""',
    )
    ben(
        "markdown_table_env_vars",
        "| Variable | Purpose | Example |\n|---|---|---|\n| `SLACK_BOT_TOKEN` | posts release notes | `xoxb-…` |\n| `SENTRY_DSN` | error reports | `https://<key>@o0.ingest.sentry.io/0` |",
    )
    ben(
        "markdown_table_checksums",
        "| file | sha256 |\n|---|---|\n"
        + "\n".join(f"| acme-{v}.tar.gz | `{hx(64)}` |" for v in ("4.1.9", "4.2.0")),
    )
    ben(
        "conflict_markers_versions",
        '<<<<<<< ours\n"version": "4.2.0",\n||||||| base\n"version": "4.1.9",\n=======\n"version": "4.1.10",\n>>>>>>> theirs',
    )
    ben(
        "format_patch_benign",
        f"From {hx(40)} Mon Sep 17 00:00:00 2001\nFrom: Jen <jen@acme.io>\nSubject: [PATCH] read the ftp password from FTP_PASSWORD\n\n---\n jobs/import.sh | 2 +-",
    )
    ben("mime_encoded_word_benign", f"Subject: =?utf-8?B?{b64('Neues VPN-Profil für das Büro')}?=")
    ben(
        "base32_totp_docs_example",
        "otpauth://totp/Example:alice@google.com?secret=JBSWY3DPEHPK3PXP&issuer=Example  (the RFC/Google Authenticator documentation example)",
    )
    ben(
        "excel_concat_benign",
        '=CONCATENATE(A2,"-",B2)\t← builds the SKU from region and product code',
    )
    ben(
        "shell_line_continuation_benign",
        'docker run --rm \\\n  -e LOG_LEVEL=debug \\\n  -v "$PWD":/src \\\n  acme/builder:4.2.0',
    )
    ben(
        "cisco_config_secret_hash",
        f"enable secret 9 $9${r(14, ALNUM + './')}${r(43, ALNUM + './')}\nusername netops privilege 15 secret 9 $9${r(14, ALNUM + './')}${r(43, ALNUM + './')}",
    )
    ben(
        "rclone_config_env_auth",
        "[s3-backup]\ntype = s3\nprovider = AWS\nenv_auth = true\nregion = eu-west-1",
    )
    ben(
        "filezilla_site_no_pass",
        "<Server>\n  <Host>ftp.partner.net</Host>\n  <Port>21</Port>\n  <User>acme</User>\n  <Logontype>2</Logontype>\n</Server>",
    )
    ben(
        "tcpdump_hex_benign",
        "10:22:31.112 IP 10.0.0.5.51544 > 10.0.0.9.80: Flags [P.], length 18\n\t0x0000:  4745 5420 2f68 6561 6c74 687a 2048 5454  GET /healthz HTT\n\t0x0010:  502f                                     P/",
    )
    ben("json_array_of_ids", json.dumps({"node_ids": [uid() for _ in range(3)]}))


def benign_lockfiles() -> None:
    section("context: lockfiles and manifests")
    ben(
        "package_lock_integrity",
        json.dumps(
            {
                "node_modules/zod": {
                    "version": "3.24.1",
                    "resolved": "https://registry.npmjs.org/zod/-/zod-3.24.1.tgz",
                    "integrity": _sha512_integrity(),
                    "license": "MIT",
                }
            },
            indent=2,
        ),
    )
    ben(
        "pnpm_lock_resolution",
        f"  /zod@3.24.1:\n    resolution: {{integrity: {_sha512_integrity()}}}\n    dev: false",
    )
    ben(
        "yarn_berry_checksum",
        f'"zod@npm:^3.24.0":\n  version: 3.24.1\n  resolution: "zod@npm:3.24.1"\n  checksum: 10c0/{hx(128)}\n  languageName: node',
    )
    ben(
        "go_sum_lines",
        f"golang.org/x/crypto v0.31.0 h1:{b64(rbytes(32))}\ngolang.org/x/crypto v0.31.0/go.mod h1:{b64(rbytes(32))}",
    )
    ben(
        "cargo_lock_checksum",
        f'[[package]]\nname = "serde"\nversion = "1.0.216"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\nchecksum = "{hx(64)}"',
    )
    ben(
        "uv_lock_wheel_hash",
        f'wheels = [\n    {{ url = "https://files.pythonhosted.org/packages/{hx(2)}/{hx(2)}/{hx(60)}/httpx-0.28.1-py3-none-any.whl", hash = "sha256:{hx(64)}", size = 73517 }},\n]',
    )
    ben(
        "flake_lock_narhash",
        json.dumps(
            {
                "nodes": {
                    "nixpkgs": {
                        "locked": {
                            "lastModified": 1764500000,
                            "narHash": "sha256-" + b64(rbytes(32)),
                            "owner": "NixOS",
                            "repo": "nixpkgs",
                            "rev": hx(40),
                            "type": "github",
                        }
                    }
                }
            }
        ),
    )
    ben(
        "gemfile_lock_checksums",
        f"CHECKSUMS\n  rack (3.1.8) sha256={hx(64)}\n  rails (8.0.1) sha256={hx(64)}",
    )
    ben(
        "composer_lock_dist",
        json.dumps(
            {
                "name": "monolog/monolog",
                "version": "3.8.1",
                "dist": {
                    "type": "zip",
                    "url": "https://api.github.com/repos/Seldaek/monolog/zipball/" + hx(40),
                    "reference": hx(40),
                    "shasum": "",
                },
            }
        ),
    )
    ben(
        "podfile_lock_checksums",
        f"SPEC CHECKSUMS:\n  Alamofire: {hx(40)}\n  Kingfisher: {hx(40)}\n\nPODFILE CHECKSUM: {hx(40)}\n\nCOCOAPODS: 1.16.2",
    )
    ben(
        "pubspec_lock_sha256",
        f'  http:\n    dependency: "direct main"\n    description:\n      name: http\n      sha256: "{hx(64)}"\n      url: "https://pub.dev"\n    source: hosted\n    version: "1.2.2"',
    )
    ben(
        "gradle_verification_metadata",
        f'<component group="com.squareup.okhttp3" name="okhttp" version="4.12.0">\n   <artifact name="okhttp-4.12.0.jar">\n      <sha256 value="{hx(64)}" origin="Generated by Gradle"/>\n   </artifact>\n</component>',
    )
    ben(
        "bazel_http_archive_sha",
        f'http_archive(\n    name = "rules_python",\n    sha256 = "{hx(64)}",\n    strip_prefix = "rules_python-1.0.0",\n    url = "https://github.com/bazelbuild/rules_python/releases/download/1.0.0/rules_python-1.0.0.tar.gz",\n)',
    )
    ben(
        "homebrew_bottle_sha",
        f'  bottle do\n    sha256 cellar: :any_skip_relocation, arm64_sequoia: "{hx(64)}"\n    sha256 cellar: :any_skip_relocation, x86_64_linux:  "{hx(64)}"\n  end',
    )


def benign_extra() -> None:
    section("vendor: source forges and CI")
    ben(
        "slack_manifest_app_ids",
        f"slack manifest validate --app A0{r(9, UPPER)}\n✔ manifest.json is valid (app A0{r(9, UPPER)}, team T0{r(8, UPPER)})",
    )
    ben(
        "slack_trigger_shortcut_link",
        f"Run the standup workflow: https://slack.com/shortcuts/Ft0{r(9, UPPER)}/{hx(32)}",
    )
    ben(
        "zshrc_env_from_keychain",
        "# ~/.zshrc\nexport OPENAI_API_KEY=\"$(security find-generic-password -s openai -w)\"\nalias gpt='llm -m gpt-4o'",
    )
    ben(
        "glab_auth_status_masked",
        "gitlab.com\n  ✓ Logged in to gitlab.com as kdm (/home/kdm/.config/glab-cli/config.yml)\n  ✓ Token: **************************",
    )
    section("vendor: cloud and infrastructure")
    ben(
        "azure_devops_org_project_ids",
        f"System.CollectionId: {uid()}\nSystem.TeamProjectId: {uid()}\nBuild.BuildId: 48213",
    )
    ben(
        "bedrock_inference_profile_arn",
        f"arn:aws:bedrock:us-west-2:{r(12, DIGITS)}:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0",
    )
    ben(
        "cosmos_endpoint_only",
        "COSMOS_ENDPOINT=https://acme-orders.documents.azure.com:443/\n# auth: managed identity (DefaultAzureCredential)",
    )
    ben(
        "azure_function_anonymous_url",
        "GitHub webhook → https://acme-hooks.azurewebsites.net/api/OnPush (authLevel: anonymous, validated by HMAC of the payload)",
    )
    ben(
        "gcs_bucket_object_generation",
        f"gs://acme-artifacts/builds/4.2.0/app.tar.gz#{r(16, DIGITS)}  metageneration=1  crc32c={b64(rbytes(4))}  md5={b64(rbytes(16))}",
    )
    ben(
        "cloudflare_tunnel_list",
        f"ID                                   NAME      CREATED              CONNECTIONS\n{uid()} grafana   2026-11-02T10:00:00Z 2xfra06, 2xams01",
    )
    section("vendor: data, ML and AI tools")
    ben(
        "modal_app_ids",
        f"✓ App deployed in 3.2s! 🎉\nView Deployment: https://modal.com/apps/acme/main/deployed/ranker\nap-{r(22)}",
    )
    ben(
        "neon_project_branch_ids",
        f"NEON_PROJECT_ID={rng.choice(_WORDS)}-{rng.choice(_WORDS)}-{r(8, LOWER)}\nNEON_BRANCH_ID=br-{rng.choice(_WORDS)}-{rng.choice(_WORDS)}-{r(8, LOWER)}",
    )
    ben(
        "kaggle_dataset_slug",
        "kaggle datasets download -d acme/support-tickets-2026 -p data/ --unzip",
    )
    ben(
        "qdrant_collection_info",
        json.dumps(
            {
                "result": {
                    "status": "green",
                    "vectors_count": 482113,
                    "config": {"params": {"vectors": {"size": 1024, "distance": "Cosine"}}},
                },
                "time": 0.0021,
            }
        ),
    )
    section("vendor: SaaS, payments, messaging")
    ben(
        "asana_gids",
        f"Task {r(16, DIGITS)} moved to section {r(16, DIGITS)} in project {r(16, DIGITS)}",
    )
    ben(
        "trello_board_short_link",
        f"https://trello.com/b/{r(8)}/release-train — card https://trello.com/c/{r(8)}/412-rotate-keys",
    )
    ben(
        "klaviyo_public_site_id",
        f'<script async src="https://static.klaviyo.com/onsite/js/klaviyo.js?company_id={r(6)}"></script>',
    )
    ben(
        "paddle_price_and_product_ids",
        f"PADDLE_PRICE_ID=pri_01{r(24, '0123456789abcdefghjkmnpqrstvwxyz')}\nPADDLE_PRODUCT_ID=pro_01{r(24, '0123456789abcdefghjkmnpqrstvwxyz')}",
    )
    ben(
        "intercom_app_id_widget",
        f"window.intercomSettings = {{ api_base: 'https://api-iam.intercom.io', app_id: '{r(8, LOWER)}' }};",
    )
    ben(
        "wp_config_getenv_password",
        "define( 'DB_NAME', 'wordpress' );\ndefine( 'DB_USER', getenv( 'WORDPRESS_DB_USER' ) );\ndefine( 'DB_PASSWORD', getenv( 'WORDPRESS_DB_PASSWORD' ) );",
    )
    section("vendor: private keys and key files")
    ben(
        "minisign_signature_file",
        f"untrusted comment: signature from minisign secret key\nRUQ{b64(rbytes(72))[:96]}\ntrusted comment: timestamp:1764660000\tfile:acme-4.2.0.tar.gz\n{b64(rbytes(64))}",
    )
    ben(
        "ssh_cert_public",
        f"ssh-ed25519-cert-v01@openssh.com AAAAIHNzaC1lZDI1NTE5LWNlcnQtdjAxQG9wZW5zc2guY29t{b64(rbytes(180))} kdm@laptop",
    )
    ben(
        "tink_public_keyset",
        json.dumps(
            {
                "primaryKeyId": 1931667682,
                "key": [
                    {
                        "keyData": {
                            "typeUrl": "type.googleapis.com/google.crypto.tink.EcdsaPublicKey",
                            "value": b64(rbytes(70)),
                            "keyMaterialType": "ASYMMETRIC_PUBLIC",
                        },
                        "status": "ENABLED",
                        "keyId": 1931667682,
                        "outputPrefixType": "TINK",
                    }
                ],
            }
        ),
    )
    section("context: CLI invocations and shell history")
    ben("rar_list_command", "rar l backups/db-2026-12-01.rar | tail -3")
    ben(
        "gpg_encrypt_to_recipient", "gpg --batch --yes --encrypt --recipient ops@acme.io backup.tar"
    )
    ben("unzip_list_only", "unzip -l customer-export-2026-11.zip | head")
    section("context: CI logs, stack traces, protocol dumps")
    ben(
        "pop3_transcript_no_pass",
        "+OK POP3 ready\nCAPA\n+OK\nUSER\nSASL PLAIN\nSTLS\n.\nQUIT\n+OK Logging out.",
    )
    ben(
        "terraform_debug_no_auth",
        "2026-12-02T10:14:03.551Z [DEBUG] provider.terraform-provider-grafana: HTTP Request Sent: Host=acme.grafana.net Method=GET Path=/api/folders",
    )


# ============================================================================ writing


def build() -> None:
    vendors()
    agent_tools()
    configs()
    netrc_likes()
    commands()
    logs_and_traces()
    prose()
    code()
    fixtures_and_notebooks()
    exports()
    disguises()
    benign_vendor_like()
    benign_contexts()
    benign_prose_code_exports()
    benign_extra()
    benign_lockfiles()
    texts = [row["text"] for row in CORPUS]
    assert len(set(texts)) == len(texts), "two samples share a text"
    assert len({b["text"] for b in BENIGN}) == len(BENIGN), "two benign entries share a text"
    for entry in BENIGN:  # no corpus secret may leak into a benign entry
        for row in CORPUS:
            assert str(row["secret"]) not in entry["text"], (entry["source"], row["kind"])


def stats() -> str:
    by_class = Counter(CLASS_OF.values())
    shapes = Counter(str(row["shape"]) for row in CORPUS)
    split = sum(1 for row in CORPUS if row.get("parts"))
    out = [
        f"samples: {len(CORPUS)} kinds ({shapes['provider']} provider-shaped, {shapes['context']} context-only; {split} with parts)"
    ]
    out += [f"  {n:4d}  {name}" for name, n in sorted(by_class.items())]
    out.append(f"benign: {len(BENIGN)}")
    out += [f"  {n:4d}  {name}" for name, n in sorted(BENIGN_CLASS.items())]
    return "\n".join(out)


def main(argv: list[str]) -> int:
    build()
    if "--stats" in argv:
        print(stats())
        return 0
    with (HERE / "corpus_heldout8.jsonl").open("w", encoding="utf-8", newline="\n") as fh:
        for row in CORPUS:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    with (HERE / "benign_heldout8.jsonl").open("w", encoding="utf-8", newline="\n") as fh:
        for entry in BENIGN:
            fh.write(json.dumps(entry, ensure_ascii=False) + "\n")
    print(stats())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
