"""Generate bench/secrets/corpus_heldout3.jsonl: one FAKE credential of each of ~170 kinds, in
the text a developer or an agent would write around it.

Held-out 3 was written before any rule was changed for it, from public token formats (the
providers' documentation and the format lists of public secret scanners, read for the formats
only), and it leaves out the kinds a red team reported missed (those are the dev cases of
tests/scrub). Rules are never tuned on it: its misses are reported, and a later held-out set
measures what changed after seeing them.

Every record: ``kind``; ``text``; ``secret`` (the value that must not survive); ``shape``:
``provider`` (the value is recognisable by its own prefix or shape, so it is also measured as a
committed file's name) or ``context`` (only what stands around it says it is a secret).

    python bench/secrets/make_heldout3.py     # writes corpus_heldout3.jsonl next to this file
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid
from collections.abc import Callable
from pathlib import Path

R = random.Random(31337)

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


def rs(n: int, alphabet: str = ALNUM) -> str:
    return "".join(R.choice(alphabet) for _ in range(n))


def mixed(n: int, alphabet: str = ALNUM) -> str:
    """Random, with at least one digit and one letter (as real tokens nearly always have)."""
    while True:
        value = rs(n, alphabet)
        if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
            return value


def uid() -> str:
    return str(uuid.UUID(bytes=R.randbytes(16), version=4))


def b64(nbytes: int, *, url: bool = False, pad: bool = True) -> str:
    raw = R.randbytes(nbytes)
    out = (base64.urlsafe_b64encode if url else base64.b64encode)(raw).decode()
    return out if pad else out.rstrip("=")


def jwtish(payload: str) -> str:
    head = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    body = base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")
    return f"{head}.{body}.{b64(32, url=True, pad=False)}"


def password() -> str:
    words = ["lantern", "copper", "meadow", "glacier", "saffron", "harbour", "thistle", "ember"]
    style = R.randrange(4)
    if style == 0:
        return R.choice(words).capitalize() + str(R.randint(10, 9999)) + R.choice("!@#$%&*")
    if style == 1:
        return rs(R.randint(12, 20), ALNUM + "!@#%^&*-_")
    if style == 2:
        return f"{R.choice(words)}-{R.choice(words)}-{R.randint(10, 99)}"
    return mixed(R.randint(14, 24))


USERS = ["deploy", "svc-reporting", "ops", "build", "priya", "tkaczmarek", "ci"]
HOSTS = ["db.prod.acme.internal", "10.20.4.11", "cache-01.eu.acme.net", "mq.acme.local"]

Case = tuple[str, str, Callable[[], str], list[str]]  # kind, shape, secret, templates
CASES: list[Case] = []


def case(kind: str, shape: str, secret: Callable[[], str], *templates: str) -> None:
    CASES.append((kind, shape, secret, list(templates)))


P, C = "provider", "context"

# ---------------------------------------------------------------- AI and ML providers
case(
    "anthropic_admin_key",
    P,
    lambda: "sk-ant-admin01-" + rs(93, B64URL) + "AA",
    "ANTHROPIC_ADMIN_KEY={s} ./scripts/usage-report.sh",
)
case(
    "openai_project_key",
    P,
    lambda: "sk-proj-" + rs(58, B64URL) + "T3BlbkFJ" + rs(58, B64URL),
    'client = OpenAI(api_key="{s}")  # TODO move to env',
)
case(
    "xai_api_key",
    P,
    lambda: "xai-" + mixed(80),
    "curl https://api.x.ai/v1/models -H 'Authorization: Bearer {s}'",
)
case(
    "perplexity_api_key",
    P,
    lambda: "pplx-" + mixed(48),
    "set PERPLEXITY_API_KEY to {s} in the staging env and the eval ran",
)
case("deepseek_api_key", P, lambda: "sk-" + rs(32, HEX), "DEEPSEEK_API_KEY: {s}")
case(
    "langsmith_key",
    P,
    lambda: f"lsv2_pt_{rs(32, HEX)}_{rs(10, HEX)}",
    "export LANGCHAIN_API_KEY={s}",
)
case(
    "pinecone_key",
    P,
    lambda: "pcsk_" + mixed(6) + "_" + mixed(60, ALNUM),
    "pinecone init failed until I passed api_key='{s}'",
)
case("fireworks_key", P, lambda: "fw_" + mixed(24), "FIREWORKS_API_KEY={s}")
case(
    "mistral_key", C, lambda: mixed(32), "MISTRAL_API_KEY={s} python eval.py --model mistral-small"
)
case("together_key", C, lambda: rs(64, HEX), '"together": {{"api_key": "{s}"}}')
case("replicate_token_v2", P, lambda: "r8_" + mixed(37), "The replicate token r8 one we used: {s}")
case("wandb_key", C, lambda: rs(40, HEX), "wandb login {s}")
case(
    "huggingface_org_token",
    P,
    lambda: "api_org_" + rs(34, string.ascii_letters),
    "HF org token for the mirror job: {s}",
)
case("elevenlabs_key", C, lambda: "sk_" + rs(48, HEX), "xi-api-key: {s}")
case("assemblyai_key", C, lambda: rs(32, HEX), 'ASSEMBLYAI_API_KEY = "{s}"')

# ---------------------------------------------------------------- cloud
case(
    "alibaba_access_key_id",
    P,
    lambda: "LTAI" + mixed(20),
    "aliyun configure set --access-key-id {s} --region cn-hangzhou",
)
case("alibaba_access_key_secret", C, lambda: mixed(30), "ALIBABA_CLOUD_ACCESS_KEY_SECRET={s}")
case("tencent_secret_id", P, lambda: "AKID" + mixed(32), "TENCENTCLOUD_SECRET_ID={s}")
case(
    "gcp_hmac_access_id",
    P,
    lambda: "GOOG1E" + rs(54, UPPER_ALNUM),
    "gsutil hmac: access id {s} for the backup bucket",
)
case(
    "gcp_hmac_secret",
    C,
    lambda: b64(30),
    "[Credentials]\ngs_access_key_id = GOOG1EXAMPLEIDX\ngs_secret_access_key = {s}",
)
case("ibm_cloud_api_key", C, lambda: rs(44, B64URL), "ibmcloud login --apikey {s} -r us-south")
case(
    "oci_auth_token",
    C,
    lambda: rs(20, ALNUM + "()<>#;:+-_."),
    "docker login fra.ocir.io -u tenancy/oracleidentitycloudservice/me -p '{s}'",
)
case("do_spaces_key", P, lambda: "DO00" + rs(16, UPPER_ALNUM), "SPACES_ACCESS_KEY_ID={s}")
case("do_spaces_secret", C, lambda: b64(32, pad=False)[:43], "spaces secret key is {s}")
case("linode_token", C, lambda: rs(64, HEX), "linode-cli configure --token {s}")
case(
    "scaleway_access_key",
    P,
    lambda: "SCW" + rs(17, UPPER_ALNUM),
    "SCW_ACCESS_KEY={s}\nSCW_DEFAULT_REGION=fr-par",
)
case("scaleway_secret_key", C, lambda: uid(), "scw init secret-key={s}")
case("hetzner_token", C, lambda: mixed(64), "HCLOUD_TOKEN={s} terraform apply")
case("vultr_api_key", C, lambda: rs(36, UPPER_ALNUM), "vultr-cli --api-key {s} instance list")
case(
    "ovh_application_secret",
    C,
    lambda: mixed(32),
    "[ovh-eu]\napplication_key=aBcD1234eFgH5678\napplication_secret={s}",
)
case("backblaze_app_key", P, lambda: "K00" + rs(28, ALNUM), "b2 authorize-account 0012ab34cd56 {s}")
case(
    "minio_secret", C, lambda: mixed(40), "mc alias set local http://127.0.0.1:9000 minioadmin {s}"
)
case("wasabi_secret", C, lambda: rs(40, B64), "wasabi secret: {s}")
case("aws_mws_key", P, lambda: "amzn.mws." + uid(), "MWS_AUTH_TOKEN={s}")
case(
    "aws_secret_in_credentials_csv",
    C,
    lambda: rs(40, B64),
    "User name,Password,Access key ID,Secret access key\nci-deploy,,AKIAZZZZ,{s}",
)
case(
    "azure_openai_key",
    C,
    lambda: rs(32, HEX),
    "AZURE_OPENAI_API_KEY={s}\nAZURE_OPENAI_ENDPOINT=https://acme.openai.azure.com/",
)
case(
    "azure_search_admin_key",
    C,
    lambda: rs(52, UPPER_ALNUM),
    "curl -H 'api-key: {s}' https://acme.search.windows.net/indexes",
)
case(
    "azure_function_key",
    C,
    lambda: rs(54, B64URL) + "==",
    "https://acme-fn.azurewebsites.net/api/ingest?code={s}",
)
case("azure_cosmos_key", C, lambda: b64(64), 'COSMOS_KEY="{s}"')
case(
    "azure_appconfig_secret",
    C,
    lambda: b64(32),
    "Endpoint=https://acme.azconfig.io;Id=Xk2-l0-s0:abc;Secret={s}",
)
case("cloudflare_api_token", C, lambda: rs(40, B64URL), "CLOUDFLARE_API_TOKEN={s} wrangler deploy")
case("cloudflare_global_key", C, lambda: rs(37, HEX), "X-Auth-Email: ops@acme.io\nX-Auth-Key: {s}")
case(
    "akamai_client_secret",
    C,
    lambda: b64(32),
    "[default]\nclient_secret = {s}\nhost = akab-xyz.luna.akamaiapis.net",
)
case("fastly_token", C, lambda: rs(32, B64URL), "fastly service list --token {s}")
case("vercel_token", C, lambda: mixed(24), "vercel deploy --prod --token={s}")
case("railway_token", C, lambda: uid(), "RAILWAY_TOKEN={s} railway up")
case(
    "neon_api_key", P, lambda: "napi_" + rs(64, LOWER_ALNUM), "neonctl projects list --api-key {s}"
)
case("upstash_token", C, lambda: "AX" + b64(60, pad=False), "UPSTASH_REDIS_REST_TOKEN={s}")
case("fly_org_token", P, lambda: "fo1_" + rs(43, B64URL), "flyctl deploy --access-token {s}")
case("heroku_v2_key", P, lambda: "HRKU-AA" + rs(58, B64URL), "heroku auth:token printed {s}")
case("netlify_personal_token", C, lambda: rs(43, B64URL), "NETLIFY_AUTH_TOKEN: {s}")
case(
    "openshift_token",
    P,
    lambda: "sha256~" + rs(43, B64URL),
    "oc login --token={s} --server=https://api.ocp.acme.io:6443",
)
case(
    "kubeconfig_token", C, lambda: b64(48, pad=False), "users:\n- name: ci\n  user:\n    token: {s}"
)
case(
    "kubeconfig_client_key",
    C,
    lambda: base64.b64encode(b"-----BEGIN RSA PRIVATE KEY-----\n" + R.randbytes(60)).decode(),
    "  user:\n    client-certificate-data: LS0tLS1CRUdJTg==\n    client-key-data: {s}",
)
case("consul_token", C, lambda: uid(), "CONSUL_HTTP_TOKEN={s} consul kv get app/config")
case("nomad_token", C, lambda: uid(), "export NOMAD_TOKEN='{s}'")
case("vault_unseal_key", C, lambda: b64(32), "Unseal Key 1: {s}")
case("vault_legacy_token", P, lambda: "s." + mixed(24), "VAULT_TOKEN={s} vault kv get secret/app")
case("vault_batch_token", P, lambda: "hvb." + rs(140, B64URL), "batch token for the CI role: {s}")
case(
    "terraform_rc_token",
    C,
    lambda: rs(14, ALNUM) + ".atlasv1." + rs(67, B64URL),
    'credentials "app.terraform.io" {{\n  token = "{s}"\n}}',
)
case("pulumi_passphrase", C, lambda: password(), "PULUMI_CONFIG_PASSPHRASE={s} pulumi up")
case(
    "ansible_vault_password",
    C,
    lambda: password(),
    "echo '{s}' > ~/.vault_pass && ansible-playbook site.yml --vault-password-file ~/.vault_pass",
)

# ---------------------------------------------------------------- code hosting, CI, packages
case(
    "github_app_installation",
    P,
    lambda: "ghs_" + mixed(36),
    "the action logs printed the installation token {s} (masking was off)",
)
case(
    "github_refresh_token",
    P,
    lambda: "ghr_" + mixed(76),
    '{{"refresh_token": "{s}", "expires_in": 15897600}}',
)
case(
    "github_fine_grained_pat",
    P,
    lambda: "github_pat_" + mixed(22) + "_" + mixed(59),
    "git clone https://x-access-token:{s}@github.com/acme/infra.git",
)
case(
    "gitlab_job_token",
    P,
    lambda: "glcbt-" + rs(2, ALNUM) + "_" + rs(20, B64URL),
    "CI_JOB_TOKEN leaked in the trace: {s}",
)
case(
    "gitlab_session_cookie",
    C,
    lambda: rs(32, LOWER_ALNUM),
    "curl -b '_gitlab_session={s}' https://gitlab.acme.io/api/v4/user",
)
case(
    "gitlab_routable_pat",
    P,
    lambda: "glpat-" + rs(27, B64URL) + ".01.0" + rs(8, LOWER_ALNUM),
    "GITLAB_TOKEN={s}",
)
case("gitea_token", C, lambda: rs(40, HEX), "tea login add --url https://git.acme.io --token {s}")
case(
    "bitbucket_access_token",
    P,
    lambda: "ATCTT3xFfGN0" + rs(180, B64URL),
    "Authorization: Bearer {s}",
)
case(
    "phabricator_token",
    P,
    lambda: "api-" + rs(28, LOWER_ALNUM),
    "arc set-config --global api.token {s}",
)
case(
    "circleci_pat",
    P,
    lambda: "CCIPAT_" + mixed(22) + "_" + rs(40, HEX),
    "circleci setup --token {s} --host https://circleci.com --no-prompt",
)
case("buildkite_token", P, lambda: "bkua_" + rs(40, HEX), "BUILDKITE_API_TOKEN={s}")
case("travis_token", C, lambda: mixed(22), "travis login --github-token x; travis token is {s}")
case("drone_token", C, lambda: mixed(32), "DRONE_TOKEN={s} drone build ls acme/api")
case(
    "jenkins_api_token",
    C,
    lambda: "11" + rs(32, HEX),
    "java -jar jenkins-cli.jar -s https://ci.acme.io -auth admin:{s} build deploy",
)
case(
    "teamcity_token",
    P,
    lambda: "eyJ0eXAiOiAiVENWMiJ9." + rs(36, B64URL) + "." + rs(48, B64URL),
    "teamcity token: {s}",
)
case(
    "octopus_api_key",
    P,
    lambda: "API-" + rs(26, UPPER_ALNUM),
    "octo push --package app.1.0.nupkg --server https://deploy.acme.io --apiKey {s}",
)
case(
    "harness_pat",
    P,
    lambda: "pat." + rs(22, B64URL) + "." + mixed(24) + "." + mixed(20),
    "x-api-key: {s}",
)
case(
    "argocd_token",
    P,
    lambda: jwtish('{"iss":"argocd","sub":"ci:apiKey"}'),
    "argocd app sync api --auth-token {s}",
)
case("sonarqube_user_token", P, lambda: "squ_" + rs(40, HEX), "mvn sonar:sonar -Dsonar.token={s}")
case("sonarqube_project_token", P, lambda: "sqp_" + rs(40, HEX), "SONAR_TOKEN={s}")
case(
    "sourcegraph_token",
    P,
    lambda: "sgp_" + rs(16, HEX) + "_" + rs(40, HEX),
    "src login https://sourcegraph.acme.io, token {s}",
)
case("codecov_token", C, lambda: uid(), "CODECOV_TOKEN={s}")
case("coveralls_token", C, lambda: mixed(33), "repo_token: {s}\nservice_name: github-actions")
case("codacy_token", C, lambda: rs(32, HEX), "CODACY_PROJECT_TOKEN={s}")
case("snyk_token", C, lambda: uid(), "snyk auth {s}")
case(
    "deepsource_dsn",
    P,
    lambda: "https://" + rs(32, HEX) + "@app.deepsource.com",
    "DEEPSOURCE_DSN={s}",
)
case("cloudsmith_key", C, lambda: rs(40, HEX), "cloudsmith push python acme/pkgs dist/*.whl -k {s}")
case("quay_robot_token", C, lambda: rs(64, UPPER_ALNUM), "docker login -u 'acme+ci' -p {s} quay.io")
case(
    "nuget_api_key",
    P,
    lambda: "oy2" + rs(43, LOWER_ALNUM),
    "dotnet nuget push Acme.Core.nupkg --api-key {s} --source nuget.org",
)
case("cargo_registry_token", P, lambda: "cio" + mixed(32), '[registry]\ntoken = "{s}"')
case(
    "clojars_token",
    P,
    lambda: "CLOJARS_" + rs(60, LOWER_ALNUM),
    "CLOJARS_PASSWORD={s} lein deploy clojars",
)
case("gem_credentials", C, lambda: "rubygems_" + rs(48, HEX), "---\n:rubygems_api_key: {s}")
case("npmrc_auth_token", C, lambda: mixed(36), "//registry.acme.io/:_authToken={s}")
case(
    "pypirc_password",
    C,
    lambda: password(),
    "[acme-internal]\nrepository = https://pypi.acme.io/\nusername = uploader\npassword = {s}",
)
case(
    "maven_settings_password",
    C,
    lambda: password(),
    "<server>\n  <id>acme-releases</id>\n  <username>deployer</username>\n"
    "  <password>{s}</password>\n</server>",
)
case(
    "gradle_signing_password",
    C,
    lambda: password(),
    "signing.keyId=24875D73\nsigning.password={s}\nsigning.secretKeyRingFile=/tmp/secring.gpg",
)
case(
    "composer_bitbucket_secret",
    C,
    lambda: mixed(32),
    '{{"bitbucket-oauth": {{"bitbucket.org": {{"consumer-key": "k3y", '
    '"consumer-secret": "{s}"}}}}}}',
)
case(
    "docker_config_identitytoken",
    C,
    lambda: b64(40, pad=False),
    '{{"auths": {{"registry.acme.io": {{"identitytoken": "{s}"}}}}}}',
)
case(
    "github_actions_runner_token",
    C,
    lambda: "A" + rs(28, UPPER_ALNUM),
    "./config.sh --url https://github.com/acme/api --token {s}",
)
case("expo_token", C, lambda: rs(40, B64URL), "EXPO_TOKEN={s} eas build --platform ios")
case("percy_token", C, lambda: rs(64, HEX), "PERCY_TOKEN={s} npx percy exec -- npm test")
case(
    "browserstack_key",
    C,
    lambda: mixed(20),
    "BROWSERSTACK_USERNAME=acme1\nBROWSERSTACK_ACCESS_KEY={s}",
)
case("saucelabs_key", C, lambda: uid(), "sauce-connect -u acme -k {s}")
case("lambdatest_key", C, lambda: mixed(50), "LT_ACCESS_KEY={s}")
case("cypress_record_key", C, lambda: uid(), "npx cypress run --record --key {s}")

# ---------------------------------------------------------------- SaaS APIs
case(
    "1password_secret_key",
    P,
    lambda: (
        f"A3-{rs(6, UPPER_ALNUM)}-{rs(11, UPPER_ALNUM)}-{rs(5, UPPER_ALNUM)}-"
        f"{rs(5, UPPER_ALNUM)}-{rs(5, UPPER_ALNUM)}"
    ),
    "my 1Password secret key (for the emergency kit): {s}",
)
case("1password_service_token", P, lambda: "ops_eyJ" + rs(260, B64), "OP_SERVICE_ACCOUNT_TOKEN={s}")
case(
    "bitwarden_access_token",
    P,
    lambda: f"0.{uid()}.{mixed(30)}:{b64(16)}",
    "BWS_ACCESS_TOKEN={s} bws secret list",
)
case(
    "infisical_token",
    P,
    lambda: "st." + uid() + "." + rs(32, HEX) + "." + rs(32, HEX),
    "INFISICAL_TOKEN={s}",
)
case("doppler_scim", P, lambda: "dp.scim." + mixed(40), "doppler scim token {s}")
case("adobe_client_secret", P, lambda: "p8e-" + mixed(32), "ADOBE_CLIENT_SECRET={s}")
case(
    "airtable_pat",
    P,
    lambda: "pat" + mixed(14) + "." + rs(64, HEX),
    'curl https://api.airtable.com/v0/meta/bases -H "Authorization: Bearer {s}"',
)
case("algolia_admin_key", C, lambda: rs(32, HEX), "algolia: app id XYZ12AB3C4, admin key {s}")
case(
    "asana_pat",
    P,
    lambda: f"2/{rs(16, DIGITS)}/{rs(16, DIGITS)}:{rs(32, HEX)}",
    "ASANA_ACCESS_TOKEN={s}",
)
case(
    "clickup_token", P, lambda: f"pk_{rs(8, DIGITS)}_{rs(32, UPPER_ALNUM)}", "clickup api token {s}"
)
case(
    "contentful_pat",
    P,
    lambda: "CFPAT-" + rs(43, B64URL),
    "contentful login --management-token {s}",
)
case(
    "dynatrace_token",
    P,
    lambda: f"dt0c01.{rs(24, UPPER_ALNUM)}.{rs(64, UPPER_ALNUM)}",
    "DT_API_TOKEN={s}",
)
case(
    "easypost_key", P, lambda: "EZAK" + rs(54, LOWER_ALNUM), "EasyPost::Client.new(api_key: '{s}')"
)
case("figma_pat", P, lambda: "figd_" + rs(40, B64URL), "X-Figma-Token: {s}")
case("frameio_token", P, lambda: "fio-u-" + rs(64, B64URL), "frame.io token: {s}")
case(
    "freshdesk_key", C, lambda: mixed(20), "curl -u {s}:X https://acme.freshdesk.com/api/v2/tickets"
)
case("hubspot_pat", P, lambda: "pat-na1-" + uid(), "HUBSPOT_ACCESS_TOKEN={s}")
case("intercom_token", C, lambda: b64(45, pad=False) + "=", "intercom access token {s}")
case("launchdarkly_key", P, lambda: "api-" + uid(), "LD_API_KEY={s}")
case("launchdarkly_sdk_key", P, lambda: "sdk-" + uid(), "ldclient.set_config(Config('{s}'))")
case("linear_oauth_secret", C, lambda: rs(32, HEX), "LINEAR_CLIENT_SECRET={s}")
case(
    "lob_live_key",
    P,
    lambda: "live_" + rs(35, HEX),
    "Lob.api_key = 'live_...'  # the real one: {s}",
)
case(
    "mattermost_token",
    C,
    lambda: rs(26, LOWER_ALNUM),
    "mmctl auth login https://chat.acme.io --name acme --access-token {s}",
)
case("maxmind_license", P, lambda: f"{mixed(6)}_{mixed(29)}_mmk", "GEOIPUPDATE_LICENSE_KEY={s}")
case(
    "monday_token",
    P,
    lambda: jwtish('{"tid":123,"aai":11,"uid":42,"rgn":"use1"}'),
    "monday API token for the sync: {s}",
)
case("notion_oauth_secret", P, lambda: "secret_" + mixed(43), "NOTION_CLIENT_SECRET={s}")
case("okta_api_token", P, lambda: "00" + rs(40, B64URL), "Authorization: SSWS {s}")
case(
    "pagerduty_token",
    P,
    lambda: "u+" + rs(18, B64URL),
    "curl -H 'Authorization: Token token={s}' https://api.pagerduty.com/users",
)
case("opsgenie_key", C, lambda: uid(), "Authorization: GenieKey {s}")
case("postmark_server_token", C, lambda: uid(), "X-Postmark-Server-Token: {s}")
case("prefect_key", P, lambda: "pnu_" + mixed(36), "prefect cloud login -k {s}")
case("readme_key", P, lambda: "rdme_" + rs(70, LOWER_ALNUM), "rdme openapi --key={s}")
case(
    "salesforce_token",
    P,
    lambda: f"00D{rs(15, ALNUM)}!{rs(96, B64URL + '.')}",
    "sf org login access-token --instance-url https://acme.my.salesforce.com, token {s}",
)
case("scalingo_token", P, lambda: "tk-us-" + rs(48, B64URL), "scalingo login --api-token {s}")
case("sendbird_token", C, lambda: rs(40, HEX), "Api-Token: {s}")
case("settlemint_pat", P, lambda: "sm_pat_" + mixed(16), "SETTLEMINT_ACCESS_TOKEN={s}")
case("shippo_key", P, lambda: "shippo_live_" + rs(40, HEX), 'shippo.config.api_key = "{s}"')
case("squarespace_key", C, lambda: uid(), "squarespace commerce api key {s}")
case(
    "sumologic_access_key",
    C,
    lambda: mixed(64),
    "SUMO_ACCESS_ID=suA1b2C3d4E5f6\nSUMO_ACCESS_KEY={s}",
)
case(
    "tailscale_authkey",
    P,
    lambda: f"tskey-auth-{mixed(12)}-{mixed(32)}",
    "tailscale up --authkey={s}",
)
case(
    "ngrok_authtoken",
    P,
    lambda: "2" + mixed(26) + "_" + mixed(21),
    "ngrok config add-authtoken {s}",
)
case("typeform_token", P, lambda: "tfp_" + rs(59, B64URL), "TYPEFORM_TOKEN={s}")
case(
    "trello_token",
    C,
    lambda: rs(64, HEX),
    "https://api.trello.com/1/members/me/boards?key=0123456789abcdef0123456789abcdef&token={s}",
)
case(
    "zendesk_token",
    C,
    lambda: mixed(40),
    "curl https://acme.zendesk.com/api/v2/tickets.json -u ops@acme.io/token:{s}",
)
case(
    "zoom_client_secret", C, lambda: mixed(32), "ZOOM_CLIENT_ID=a1B2c3D4e5\nZOOM_CLIENT_SECRET={s}"
)
case(
    "calendly_pat",
    P,
    lambda: jwtish('{"iss":"https://auth.calendly.com","jti":"x"}'),
    "calendly token {s}",
)
case("docusign_secret", C, lambda: uid(), "docusign integration key 3fa2..., secret key {s}")
case("box_developer_token", C, lambda: mixed(32), "box configure:environments:add --dev-token {s}")
case("spotify_client_secret", C, lambda: rs(32, HEX), "SPOTIPY_CLIENT_SECRET='{s}'")
case(
    "reddit_client_secret",
    C,
    lambda: rs(27, B64URL),
    "praw.Reddit(client_id='k2Jx9', client_secret='{s}', user_agent='acme')",
)
case("discord_client_secret", C, lambda: rs(32, B64URL), "DISCORD_CLIENT_SECRET={s}")
case(
    "twitter_access_token", P, lambda: f"{rs(19, DIGITS)}-{mixed(40)}", "twitter access_token = {s}"
)
case("twitter_consumer_secret", C, lambda: mixed(50), "TWITTER_CONSUMER_SECRET={s}")
case(
    "facebook_app_token", P, lambda: f"{rs(16, DIGITS)}|{rs(27, B64URL)}", "graph api app token {s}"
)
case("instagram_token", P, lambda: "IGQV" + mixed(180, B64URL), "INSTAGRAM_ACCESS_TOKEN={s}")
case("wakatime_key", P, lambda: "waka_" + uid(), "[settings]\napi_key = {s}")
case("posthog_personal_key", P, lambda: "phx_" + mixed(43), "POSTHOG_PERSONAL_API_KEY={s}")
case(
    "honeycomb_key",
    P,
    lambda: "hcaik_" + rs(58, LOWER_ALNUM),
    "OTEL_EXPORTER_OTLP_HEADERS=x-honeycomb-team={s}",
)
case(
    "splunk_hec_token",
    C,
    lambda: uid(),
    "curl -k https://splunk.acme.io:8088/services/collector -H 'Authorization: Splunk {s}'",
)
case("rollbar_token", C, lambda: rs(32, HEX), "ROLLBAR_ACCESS_TOKEN={s}")
case("bugsnag_key", C, lambda: rs(32, HEX), "Bugsnag.start({{ apiKey: '{s}' }})")
case("datadog_app_key", C, lambda: rs(40, HEX), "DD_APP_KEY={s}")
case(
    "elastic_api_key",
    C,
    lambda: base64.b64encode(f"{mixed(20)}:{mixed(22)}".encode()).decode(),
    "curl -H 'Authorization: ApiKey {s}' https://es.acme.io:9200/_cat/indices",
)
case("grafana_api_key_legacy", P, lambda: "eyJrIjoi" + rs(60, ALNUM) + "==", "GF_API_KEY={s}")
case("new_relic_browser_key", P, lambda: "NRJS-" + rs(19, HEX), "newrelic browser key {s}")
case(
    "sentry_org_token",
    P,
    lambda: "sntrys_eyJpYXQiOjE3MDAwMDAwMDAsInVybCI6Imh0dHBzOi8vc2VudHJ5LmlvIn0_" + rs(43, B64),
    "SENTRY_AUTH_TOKEN={s}",
)

# ---------------------------------------------------------------- mail, messaging, payments
case("mailgun_pubkey", P, lambda: "pubkey-" + rs(32, HEX), "MAILGUN_PUBLIC_KEY={s}")
case("mailjet_secret", C, lambda: rs(32, HEX), "MJ_APIKEY_PRIVATE={s}")
case("mandrill_key", C, lambda: "md-" + rs(22, B64URL), "mandrill api key {s}")
case("sparkpost_key", C, lambda: rs(40, HEX), "SPARKPOST_API_KEY={s}")
case("plivo_auth_token", C, lambda: mixed(40), "plivo.RestClient('MAODUZYTQ0Y2FMYJBLOW', '{s}')")
case("vonage_api_secret", C, lambda: mixed(16), "VONAGE_API_KEY=a1b2c3d4\nVONAGE_API_SECRET={s}")
case(
    "telnyx_key",
    P,
    lambda: "KEY0" + rs(32, HEX).upper() + "_" + rs(22, ALNUM),
    "TELNYX_API_KEY={s}",
)
case("messagebird_key", C, lambda: mixed(25), "messagebird.Client('{s}')")
case("pusher_secret", C, lambda: rs(20, HEX), "PUSHER_APP_SECRET={s}")
case("pubnub_secret", P, lambda: "sec-c-" + b64(36, pad=False), "pubnub secret key {s}")
case(
    "ably_key",
    P,
    lambda: f"{rs(6, ALNUM)}.{rs(6, ALNUM)}:{rs(43, B64URL)}",
    "new Ably.Realtime('{s}')",
)
case("stream_secret", C, lambda: rs(64, LOWER_ALNUM), "STREAM_API_SECRET={s}")
case("agora_certificate", C, lambda: rs(32, HEX), "agora app certificate: {s}")
case("stripe_prod_key", P, lambda: "sk_prod_" + mixed(24), "STRIPE_KEY={s}")
case("stripe_restricted_live", P, lambda: "rk_live_" + mixed(99), "stripe login --api-key {s}")
case("clerk_secret", P, lambda: "sk_live_" + mixed(40), "CLERK_SECRET_KEY={s}")
case("paystack_secret", P, lambda: "sk_live_" + rs(40, HEX), "paystack secret {s}")
case(
    "razorpay_key",
    P,
    lambda: "rzp_live_" + mixed(14),
    "RAZORPAY_KEY_ID={s}\nRAZORPAY_KEY_SECRET=see 1password",
)
case(
    "razorpay_secret",
    C,
    lambda: mixed(24),
    "razorpay.Client(auth=('rzp_live_A1b2C3d4E5f6G7', '{s}'))",
)
case(
    "braintree_access_token",
    P,
    lambda: f"access_token$production${rs(16, LOWER_ALNUM)}${rs(32, HEX)}",
    "BRAINTREE_ACCESS_TOKEN={s}",
)
case(
    "braintree_private_key",
    C,
    lambda: rs(32, HEX),
    "braintree.Configuration.configure(Environment.Production, 'mid1', 'pub1', '{s}')",
)
case("adyen_key", P, lambda: "AQE" + rs(120, B64URL + "+"), "X-API-Key: {s}")
case("mollie_key", P, lambda: "live_" + mixed(30), "mollie.api_key = {s}")
case("square_app_secret", P, lambda: "sq0csp-" + rs(43, B64URL), "SQUARE_APPLICATION_SECRET={s}")
case(
    "flutterwave_secret",
    P,
    lambda: "FLWSECK_TEST-" + rs(32, "abcdefgh0123456789") + "-X",
    "FLW_SECRET_KEY={s}",
)
case("gocardless_token", P, lambda: "live_" + rs(40, B64URL), "GOCARDLESS_ACCESS_TOKEN={s}")
case("duffel_token", P, lambda: "duffel_live_" + rs(43, B64URL), "DUFFEL_ACCESS_TOKEN={s}")
case("coinbase_secret", C, lambda: rs(64, B64URL), "coinbase api secret {s}")
case("binance_secret", C, lambda: mixed(64), "client = Client(api_key, api_secret='{s}')")
case("kraken_private_key", C, lambda: b64(64), "KRAKEN_PRIVATE_KEY={s}")
case(
    "etherscan_key",
    C,
    lambda: rs(34, UPPER_ALNUM),
    "ETHERSCAN_API_KEY={s} npx hardhat verify --network mainnet 0x1234",
)
case("infura_secret", C, lambda: rs(32, HEX), "INFURA_PROJECT_SECRET={s}")
case("alchemy_key", C, lambda: rs(32, B64URL), "https://eth-mainnet.g.alchemy.com/v2/{s}")
case(
    "ethereum_private_key",
    C,
    lambda: "0x" + rs(64, HEX),
    "deployer private key: {s} (testnet only, but still)",
)
case(
    "bitcoin_wif",
    P,
    lambda: "5" + R.choice("HJK") + rs(49, B58),
    "imported wallet WIF {s} into electrum",
)
case(
    "wallet_mnemonic",
    C,
    lambda: " ".join(
        R.choice(
            [
                "abandon",
                "ability",
                "absorb",
                "acid",
                "across",
                "actor",
                "adapt",
                "advice",
                "afraid",
                "agent",
                "album",
                "alert",
                "alpha",
                "anchor",
                "angle",
                "ankle",
                "apple",
                "arena",
            ]
        )
        for _ in range(12)
    ),
    'MNEMONIC="{s}"',
)

# ---------------------------------------------------------------- databases, URLs, config
case(
    "mongodb_srv_uri",
    C,
    lambda: password(),
    "MONGODB_URI=mongodb+srv://app:{s}@cluster0.ab1cd.mongodb.net/prod?retryWrites=true",
)
case(
    "amqps_uri", C, lambda: password(), "CELERY_BROKER_URL=amqps://worker:{s}@mq.acme.io:5671/jobs"
)
case(
    "rediss_uri_no_user",
    C,
    lambda: password(),
    "REDIS_URL=rediss://:{s}@cache-01.eu.acme.net:6380/0",
)
case(
    "jdbc_password_param",
    C,
    lambda: password(),
    "jdbc:sqlserver://db.prod.acme.internal:1433;databaseName=app;user=sa;password={s};",
)
case(
    "cloudinary_url",
    C,
    lambda: rs(27, B64URL),
    "CLOUDINARY_URL=cloudinary://123456789012345:{s}@acme",
)
case(
    "ldapsearch_password",
    C,
    lambda: password(),
    "ldapsearch -x -H ldaps://ldap.acme.io -D 'cn=admin,dc=acme,dc=io' -w '{s}' uid=priya",
)
case(
    "smtp_password_prose",
    C,
    lambda: password(),
    "The SMTP relay login is alerts@acme.io and its password is {s} — change it after the demo.",
)
case("netrc_password", C, lambda: password(), "machine api.acme.io\n  login deploy\n  password {s}")
case(
    "git_credentials_line",
    C,
    lambda: "glpat-" + rs(20, B64URL),
    "cat ~/.git-credentials\nhttps://oauth2:{s}@gitlab.acme.io",
)
case("mycnf_password", C, lambda: password(), '[client]\nuser=backup\npassword="{s}"')
case("redis_requirepass", C, lambda: password(), "# redis.conf\nrequirepass {s}")
case(
    "kafka_jaas_password",
    C,
    lambda: password(),
    "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
    'username="svc-ingest" password="{s}";',
)
case(
    "spring_datasource_password",
    C,
    lambda: password(),
    "spring.datasource.url=jdbc:postgresql://db:5432/app\nspring.datasource.password={s}",
)
case(
    "keystore_password",
    C,
    lambda: password(),
    "keytool -importkeystore -srckeystore app.p12 -srcstorepass {s} -destkeystore app.jks",
)
case(
    "openssl_pass_arg",
    C,
    lambda: password(),
    "openssl pkcs12 -export -in cert.pem -inkey key.pem -out app.p12 -passout pass:{s}",
)
case(
    "pg_dump_env",
    C,
    lambda: password(),
    "PGPASSFILE=/dev/null PGUSER=report PGPASS={s} pg_dump -h db app > app.sql",
)
case(
    "mssql_sa_password",
    C,
    lambda: password(),
    "docker run -e ACCEPT_EULA=Y -e MSSQL_SA_PASSWORD='{s}' mcr.microsoft.com/mssql/server:2022",
)
case("grafana_admin_password", C, lambda: password(), "GF_SECURITY_ADMIN_PASSWORD={s}")
case("elastic_password", C, lambda: password(), "ELASTIC_PASSWORD={s} docker compose up -d es01")
case(
    "django_secret_key",
    C,
    lambda: "django-insecure-" + rs(50, LOWER_ALNUM + "!@#$%^&*(-_=+)"),
    "SECRET_KEY = '{s}'",
)
case("laravel_app_key", C, lambda: "base64:" + b64(32), "APP_KEY={s}")
case("nextauth_secret", C, lambda: b64(32), "NEXTAUTH_SECRET={s}")
case("jwt_signing_secret", C, lambda: mixed(48), "jwt:\n  signing_secret: {s}\n  ttl: 3600")
case(
    "session_cookie_secret",
    C,
    lambda: mixed(40),
    "app.use(session({{ secret: '{s}', resave: false }}))",
)
case("webhook_signing_secret", C, lambda: rs(40, HEX), "GITHUB_WEBHOOK_SECRET={s}")
case("airflow_fernet_key", C, lambda: b64(32, url=True), "AIRFLOW__CORE__FERNET_KEY={s}")
case("encryption_key_yaml", C, lambda: b64(32), 'storage:\n  encryption_key: "{s}"')
case("ghost_admin_key", P, lambda: f"{rs(24, HEX)}:{rs(64, HEX)}", "GHOST_ADMIN_API_KEY={s}")
case(
    "wordpress_app_password",
    C,
    lambda: " ".join(rs(4, LOWER_ALNUM) for _ in range(6)),
    "WordPress application password for the deploy bot: {s}",
)
case(
    "here_api_key",
    C,
    lambda: rs(43, B64URL),
    "https://geocode.search.hereapi.com/v1/geocode?q=Berlin&apiKey={s}",
)
case(
    "openweather_key",
    C,
    lambda: rs(32, HEX),
    "https://api.openweathermap.org/data/2.5/weather?q=Oslo&appid={s}",
)
case(
    "ssh_password_sshpass_env",
    C,
    lambda: password(),
    "SSHPASS='{s}' sshpass -e ssh deploy@10.20.4.11",
)
case("p4_password", C, lambda: password(), "P4PASSWD={s} p4 sync //depot/main/...")
case(
    "svn_password",
    C,
    lambda: password(),
    "svn checkout https://svn.acme.io/repo --username build --password {s} --non-interactive",
)
case("ftp_url_password", C, lambda: password(), "lftp ftp://uploader:{s}@ftp.acme.io/incoming")
case(
    "powershell_securestring",
    C,
    lambda: password(),
    "$pw = ConvertTo-SecureString '{s}' -AsPlainText -Force",
)
case(
    "windows_net_use",
    C,
    lambda: password(),
    "net use Z: \\\\fs01\\share /user:ACME\\svc-backup {s}",
)
case(
    "htpasswd_plain_in_prose",
    C,
    lambda: password(),
    "basic auth on the staging site: user admin, pass {s}",
)
case("vnc_password", C, lambda: password(), "x11vnc -passwd {s} -display :0")
case("wifi_psk", C, lambda: password(), 'network={{\n    ssid="acme-office"\n    psk="{s}"\n}}')
case("env_file_secret_suffix", C, lambda: mixed(32), "PAYMENTS_SIGNING_SECRET={s}")
case(
    "yaml_nested_password",
    C,
    lambda: password(),
    "database:\n  host: db.prod.acme.internal\n  credentials:\n    password: {s}",
)
case(
    "json_client_secret",
    C,
    lambda: mixed(40, B64URL),
    '{{"web": {{"client_id": "1234.apps.googleusercontent.com", "client_secret": "{s}"}}}}',
)
case(
    "toml_token",
    C,
    lambda: mixed(40),
    '[tool.poetry.http-basic.acme]\nusername = "__token__"\npassword = "{s}"',
)
case(
    "xml_attribute_password",
    C,
    lambda: password(),
    '<connectionStrings><add name="Main" connectionString="Server=db;User Id=app;'
    'Password={s};" /></connectionStrings>',
)
case("ini_secret", C, lambda: mixed(32), "[auth]\nshared_secret = {s}")
case(
    "hcl_password",
    C,
    lambda: password(),
    'resource "aws_db_instance" "main" {{\n  username = "app"\n  password = "{s}"\n}}',
)
case("prose_token_colon", C, lambda: mixed(36), "here's the deploy token: {s} — it expires Friday")
case("prose_key_for_service", C, lambda: mixed(32), "the key for the staging metrics API is {s}")
case(
    "chat_paste_credentials", C, lambda: password(), "login for the vendor portal -> acme-ops / {s}"
)
case(
    "cli_password_equals_short",
    C,
    lambda: password(),
    "./manage.py createsuperuser --noinput --username admin --password={s}",
)


def build() -> list[dict[str, str]]:
    rows: list[dict[str, str]] = []
    seen: set[str] = set()
    for kind, shape, secret_fn, templates in CASES:
        assert kind not in seen, kind
        seen.add(kind)
        secret = secret_fn()
        text = R.choice(templates).format(s=secret)
        assert secret in text, kind
        rows.append({"kind": kind, "text": text, "secret": secret, "shape": shape})
    return rows


def main() -> None:
    rows = build()
    out = Path(__file__).with_name("corpus_heldout3.jsonl")
    with out.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    providers = sum(1 for r in rows if r["shape"] == P)
    print(f"wrote {len(rows)} kinds ({providers} by their own shape) to {out}")


if __name__ == "__main__":
    main()
