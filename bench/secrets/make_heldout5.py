"""Generate bench/secrets/corpus_heldout5.jsonl: FAKE credentials in the text of the places a
coding agent's memory reads them from — a shell history, CI YAML, a Dockerfile, Terraform, a
Kubernetes manifest or kubeconfig, an XML config, ``.npmrc`` / ``.pypirc`` / ``.netrc`` and their
kin, JDBC / ODBC / driver connection strings, a chat message, a stack trace, a log line, a file
name — and disguised the ways they are on the way (split over lines, concatenated, base64,
URL-encoded, HTML-escaped, quoted-printable, hex, repr'd bytes), plus a few token formats that
sets 1-4 do not have.

Held-out 5 was written and committed before any rule was changed for it; rules are tuned on
sets 1-4 only, and set 5's figure is reported once before and once after (issue 17, item 8).

Every record: ``kind`` (``<channel>_<what>``, unique); ``text``; ``secret`` (the value that must
not survive); ``shape``: ``provider`` (recognisable by its own prefix or shape, so also
measured as a committed file's name) or ``context``; ``parts`` (optional): the fragments of a
value split in the text, each of which must be gone.

    python bench/secrets/make_heldout5.py     # writes corpus_heldout5.jsonl next to this file
"""

from __future__ import annotations

import base64
import binascii
import json
import random
import string
import urllib.parse
import uuid
from pathlib import Path

RNG = random.Random(5505)

AZ = string.ascii_lowercase
AZU = string.ascii_uppercase
NUM = string.digits
B62 = string.ascii_letters + string.digits
B36 = AZ + NUM
B36U = AZU + NUM
HEXL = "0123456789abcdef"
B64S = B62 + "+/"
B64U = B62 + "-_"
BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def pick(n: int, alphabet: str = B62) -> str:
    """``n`` characters of ``alphabet``, with every class the alphabet has (a digit, an upper,
    a lower) present at least once, as a generated key has."""
    classes = [c for c in (str.isdigit, str.isupper, str.islower) if any(map(c, alphabet))]
    while True:
        out = "".join(RNG.choice(alphabet) for _ in range(n))
        if n < 6 or all(any(map(c, out)) for c in classes):
            return out


def hx(n: int) -> str:
    return pick(n, HEXL)


def guid() -> str:
    return str(uuid.UUID(bytes=RNG.randbytes(16), version=4))


def b64_of(data: bytes | str, *, urlsafe: bool = False, strip: bool = False) -> str:
    raw = data.encode() if isinstance(data, str) else data
    out = (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(raw).decode()
    return out.rstrip("=") if strip else out


NOUNS = ["harbor", "lantern", "meadow", "copper", "glacier", "saffron", "willow", "ember", "pine"]
ADJS = ["quiet", "rapid", "amber", "silent", "brave", "lucky", "frosty", "golden", "hollow"]


def human_pw() -> str:
    """A password as people choose them (not all random: the filter must not need it to be)."""
    style = RNG.randrange(6)
    if style == 0:
        return RNG.choice(NOUNS).capitalize() + str(RNG.randint(1990, 2029)) + RNG.choice("!#$?%")
    if style == 1:
        return pick(RNG.randint(12, 20), B62 + "!#%*-_=+.")
    if style == 2:
        return "-".join(RNG.choice(NOUNS + ADJS) for _ in range(3)) + str(RNG.randint(0, 9))
    if style == 3:
        return pick(RNG.randint(16, 24))
    if style == 4:
        return RNG.choice(ADJS) + RNG.choice(NOUNS) + str(RNG.randint(10, 99))
    return RNG.choice(ADJS).capitalize() + "_" + RNG.choice(NOUNS) + "_" + pick(4, NUM)


def pem_lines(n: int, width: int = 64) -> str:
    body = b64_of(RNG.randbytes(n * width * 3 // 4))
    return "\n".join(body[i : i + width] for i in range(0, len(body), width))


RECORDS: list[dict[str, object]] = []
PROVIDER, CONTEXT = "provider", "context"


def put(kind: str, shape: str, text: str, secret: str, parts: list[str] | None = None) -> None:
    if any(r["kind"] == kind for r in RECORDS):
        raise ValueError(f"kind {kind} twice")
    for piece in parts or [secret]:
        if piece not in text:
            raise ValueError(f"{kind}: {piece!r} is not in its text")
    record: dict[str, object] = {"kind": kind, "text": text, "secret": secret, "shape": shape}
    if parts:
        record["parts"] = parts
    RECORDS.append(record)


def fill(kind: str, shape: str, secret: str, text: str) -> None:
    """``text`` with ``@@`` where the secret goes (braces stay literal: YAML, JSON, HCL)."""
    put(kind, shape, text.replace("@@", secret), secret)


# ================================================================ shell history
fill(
    "shell_zsh_extended_history",
    CONTEXT,
    human_pw(),
    ": 1764581201:0;cd ~/src/billing\n: 1764581244:0;mysql -h 10.2.0.14 -u billing "
    "--password=@@ billing_prod\n: 1764581310:0;git status",
)
fill(
    "shell_history_numbered",
    CONTEXT,
    human_pw(),
    "  981  kubectl get pods -n payments\n  982  export RABBIT_PASS='@@'\n"
    "  983  ./consume.py --queue invoices",
)
fill(
    "shell_openssl_enc_k",
    CONTEXT,
    human_pw(),
    "openssl enc -aes-256-cbc -salt -pbkdf2 -k @@ -in dump.sql -out dump.sql.enc",
)
fill(
    "shell_openssl_passout",
    CONTEXT,
    human_pw(),
    "openssl pkcs12 -export -in cert.pem -inkey key.pem -passout pass:@@ -out client.p12",
)
fill(
    "shell_keytool_two_passes",
    CONTEXT,
    human_pw(),
    "keytool -importkeystore -srckeystore old.p12 -srcstoretype PKCS12 -srcstorepass changeit "
    "-destkeystore new.jks -deststorepass @@",
)
fill("shell_unzip_P", CONTEXT, human_pw(), "unzip -P @@ customer-export-2026-11.zip -d /tmp/exp")
fill("shell_rar_hp", CONTEXT, human_pw(), "rar a -hp@@ -m5 offsite.rar ./finance")
fill(
    "shell_curl_json_login",
    CONTEXT,
    human_pw(),
    "curl -s -X POST https://grafana.acme.io/login -H 'Content-Type: application/json' "
    '-d \'{"user":"admin","password":"@@"}\' -c jar.txt',
)
fill(
    "shell_sqlcmd_P",
    CONTEXT,
    human_pw(),
    'sqlcmd -S tcp:sql-prod-02,1433 -U sa -P "@@" -Q "SELECT name FROM sys.databases"',
)
fill(
    "shell_mount_cifs_options",
    CONTEXT,
    human_pw(),
    "sudo mount -t cifs //nas01/scans /mnt/scans -o username=scanner,password=@@,uid=1000",
)
fill(
    "shell_chpasswd_herestring",
    CONTEXT,
    human_pw(),
    'sudo chpasswd <<< "deploy:@@"',
)
fill(
    "shell_passwd_stdin",
    CONTEXT,
    human_pw(),
    "echo '@@' | sudo passwd --stdin backup",
)
fill(
    "shell_mosquitto_P",
    CONTEXT,
    human_pw(),
    "mosquitto_pub -h broker.lan -u sensor-7 -P @@ -t home/boiler/temp -m 61.5",
)
fill(
    "shell_ldapsearch_w",
    CONTEXT,
    human_pw(),
    'ldapsearch -x -H ldaps://dc1.corp.acme.io -D "CN=svc-ldap,OU=Service,DC=corp" -w @@ '
    '-b "DC=corp" "(sAMAccountName=jdoe)"',
)
fill(
    "shell_svn_password",
    CONTEXT,
    human_pw(),
    "svn checkout https://svn.acme.io/repos/legacy/trunk --username build --password @@ "
    "--non-interactive",
)
fill(
    "shell_curl_proxy_user",
    CONTEXT,
    human_pw(),
    "curl --proxy http://proxy.corp:3128 --proxy-user jdoe:@@ https://pypi.org/simple/",
)
fill(
    "shell_aws_configure_transcript",
    CONTEXT,
    pick(40, B64S),
    "$ aws configure --profile audit\nAWS Access Key ID [None]: AKIA"
    + pick(16, B36U)
    + "\nAWS Secret Access Key [None]: @@\nDefault region name [None]: eu-west-1",
)
fill(
    "shell_npm_config_authtoken",
    PROVIDER,
    "npm_" + pick(36),
    "npm config set //registry.npmjs.org/:_authToken @@",
)
fill(
    "shell_yarn_npmauthtoken_uuid",
    CONTEXT,
    guid(),
    'yarn config set npmAuthToken "@@" -H',
)
fill(
    "shell_poetry_http_basic",
    CONTEXT,
    human_pw(),
    "poetry config http-basic.acme-nexus ci-reader @@",
)
fill(
    "shell_mc_alias_set",
    CONTEXT,
    pick(40, B62),
    "mc alias set minio-prod https://s3.acme.io:9000 minioadmin @@",
)
fill(
    "shell_kubectl_set_credentials",
    CONTEXT,
    pick(48, B62),
    "kubectl config set-credentials ci-bot --token=@@",
)
fill(
    "shell_kubectl_docker_registry",
    CONTEXT,
    human_pw(),
    "kubectl create secret docker-registry regcred --docker-server=harbor.acme.io "
    "--docker-username=robot$ci --docker-password=@@ -n apps",
)
fill(
    "shell_helm_repo_add",
    CONTEXT,
    human_pw(),
    "helm repo add acme-charts https://charts.acme.io --username ci --password @@",
)
fill(
    "shell_gpg_passphrase_herestring",
    CONTEXT,
    human_pw(),
    'gpg --batch --pinentry-mode loopback --passphrase-fd 0 -d keys.tar.gpg <<< "@@"',
)
fill(
    "shell_ansible_become_pass",
    CONTEXT,
    human_pw(),
    'ansible-playbook site.yml -i prod.ini -e "ansible_become_pass=@@"',
)
fill(
    "shell_az_account_key",
    CONTEXT,
    b64_of(RNG.randbytes(64)),
    "az storage blob upload --account-name acmebackups --account-key @@ -c nightly -f db.tar.gz",
)
fill(
    "shell_gh_secret_body",
    CONTEXT,
    pick(40),
    "gh secret set SONAR_TOKEN --repo acme/api --body @@",
)
fill(
    "shell_heroku_config_set",
    CONTEXT,
    pick(32, B62),
    "heroku config:set MAILER_API_SECRET=@@ -a acme-staging",
)
fill(
    "shell_fly_secrets_set_url",
    CONTEXT,
    human_pw(),
    "fly secrets set DATABASE_URL=postgres://app:@@@acme-db.flycast:5432/app -a acme-api",
)
fill(
    "shell_redis_cli_pass_long",
    CONTEXT,
    human_pw(),
    "redis-cli -h cache-01 -p 6380 --tls --pass @@ INFO keyspace",
)
fill(
    "shell_redis_auth_prompt",
    CONTEXT,
    human_pw(),
    "127.0.0.1:6379> AUTH @@\nOK\n127.0.0.1:6379> KEYS sess:*",
)
fill(
    "shell_terraform_output_raw",
    CONTEXT,
    pick(24, B62 + "!#$%&*()-_=+[]{}<>:?"),
    "$ terraform output -raw db_admin_password\n@@\n$ psql -h db.internal -U admin",
)
fill(
    "shell_kubectl_jsonpath_decode",
    CONTEXT,
    pick(20, B62),
    "$ kubectl get secret grafana -n monitoring -o jsonpath='{.data.admin-password}' "
    "| base64 -d\n@@",
)
fill(
    "shell_git_credentials_echo",
    CONTEXT,
    human_pw(),
    'git config --global credential.helper store\necho "https://jdoe:@@@git.acme.io" '
    ">> ~/.git-credentials",
)
fill(
    "shell_powershell_securestring",
    CONTEXT,
    human_pw(),
    '$pw = ConvertTo-SecureString "@@" -AsPlainText -Force\n'
    "$cred = New-Object System.Management.Automation.PSCredential('ACME\\svc-sql', $pw)",
)
fill(
    "shell_setx_windows",
    CONTEXT,
    pick(40),
    'setx OPENAI_ORG_SECRET "@@"',
)
fill(
    "shell_env_prefix_command",
    CONTEXT,
    human_pw(),
    "RESTIC_PASSWORD=@@ restic -r s3:s3.amazonaws.com/acme-restic backup /srv",
)

# ================================================================ CI YAML
fill(
    "ci_gha_env_literal",
    CONTEXT,
    pick(40),
    "jobs:\n  deploy:\n    runs-on: ubuntu-latest\n    env:\n      CF_API_TOKEN: @@\n"
    "    steps:\n      - uses: actions/checkout@v4",
)
fill(
    "ci_gha_login_action_password",
    PROVIDER,
    "dckr_pat_" + pick(27, B64U),
    "      - uses: docker/login-action@v3\n        with:\n          username: acmebot\n"
    "          password: @@",
)
fill(
    "ci_gitlab_variables",
    CONTEXT,
    human_pw(),
    'variables:\n  POSTGRES_DB: test\n  POSTGRES_USER: runner\n  POSTGRES_PASSWORD: "@@"\n'
    "services:\n  - postgres:16",
)
fill(
    "ci_gitlab_script_curl_token",
    PROVIDER,
    "glpat-" + pick(20, B64U),
    'release:\n  script:\n    - \'curl --header "PRIVATE-TOKEN: @@" '
    '"https://gitlab.acme.io/api/v4/projects/42/releases"\'',
)
fill(
    "ci_circleci_docker_auth",
    CONTEXT,
    human_pw(),
    "    docker:\n      - image: acme/builder:2\n        auth:\n          username: acmeci\n"
    "          password: @@",
)
fill(
    "ci_azure_pipelines_name_value",
    CONTEXT,
    human_pw(),
    "variables:\n- name: acrLoginServer\n  value: acme.azurecr.io\n- name: acrPassword\n"
    "  value: @@",
)
fill(
    "ci_bitbucket_pipe_variables",
    CONTEXT,
    pick(40, B64S),
    "- pipe: atlassian/aws-s3-deploy:1.1.0\n  variables:\n    AWS_ACCESS_KEY_ID: 'AKIA"
    + pick(16, B36U)
    + "'\n    AWS_SECRET_ACCESS_KEY: '@@'\n    S3_BUCKET: 'acme-site'",
)
fill(
    "ci_drone_settings_password",
    CONTEXT,
    human_pw(),
    "- name: publish\n  image: plugins/docker\n  settings:\n    repo: acme/api\n"
    "    username: acme\n    password: @@",
)
fill(
    "ci_jenkinsfile_environment",
    CONTEXT,
    pick(32, B62),
    "pipeline {\n  agent any\n  environment {\n    NEXUS_DEPLOY_KEY = '@@'\n  }\n"
    "  stages { stage('Publish') { steps { sh './gradlew publish' } } }\n}",
)
fill(
    "ci_jenkinsfile_sh_curl",
    CONTEXT,
    human_pw(),
    "stage('Notify') {\n  steps {\n    sh \"curl -u release:@@ -X POST "
    'https://jira.acme.io/rest/api/2/issue/REL-12/comment -d @body.json"\n  }\n}',
)
fill(
    "ci_travis_env_global",
    CONTEXT,
    pick(36, B62),
    "env:\n  global:\n    - COVERALLS_REPO_TOKEN=@@\n    - NODE_ENV=test",
)
fill(
    "ci_buildkite_env",
    CONTEXT,
    human_pw(),
    'steps:\n  - label: ":rspec:"\n    command: bin/rspec\n    env:\n'
    "      REDIS_URL: redis://:@@@redis:6379/1",
)
fill(
    "ci_gha_matrix_secret_inline",
    CONTEXT,
    pick(32, HEXL),
    "    strategy:\n      matrix:\n        include:\n          - region: eu\n"
    "            dd_key: @@\n          - region: us\n            dd_key: ${{ secrets.DD_US }}",
)
fill(
    "ci_log_env_dump",
    CONTEXT,
    human_pw(),
    "##[group]Run env | sort\nCI=true\nDEPLOY_ENV=prod\nFTP_PASSWORD=@@\nGITHUB_ACTIONS=true\n"
    "##[endgroup]",
)

# ================================================================ Dockerfiles
fill("docker_env_legacy_space", CONTEXT, human_pw(), "FROM postgres:16\nENV POSTGRES_PASSWORD @@")
fill(
    "docker_env_multi_pairs",
    CONTEXT,
    pick(40),
    'ENV NODE_ENV=production PORT=8080 SESSION_SECRET="@@"',
)
fill(
    "docker_run_echo_npmrc",
    CONTEXT,
    guid(),
    'RUN echo "//npm.acme.io/:_authToken=@@" > /root/.npmrc && npm ci',
)
fill(
    "docker_run_pip_index_url",
    CONTEXT,
    human_pw(),
    "RUN pip install --no-cache-dir --index-url https://build:@@@nexus.acme.io/repository/"
    "pypi/simple acme-core==3.2.0",
)
fill(
    "docker_run_git_clone_token",
    PROVIDER,
    "ghp_" + pick(36),
    "RUN git clone --depth 1 https://@@@github.com/acme/private-lib.git /opt/lib",
)
fill(
    "docker_healthcheck_url_password",
    CONTEXT,
    human_pw(),
    "HEALTHCHECK --interval=30s CMD curl -fsS http://monitor:@@@localhost:9000/health || exit 1",
)
fill(
    "docker_run_wget_header",
    CONTEXT,
    hx(40),
    'RUN wget --header="Authorization: token @@" -O /tmp/agent.deb '
    "https://git.acme.io/api/v1/repos/ops/agent/releases/assets/7",
)
fill(
    "docker_compose_env_mapping",
    CONTEXT,
    human_pw(),
    "services:\n  keycloak:\n    image: quay.io/keycloak/keycloak:26.0\n    environment:\n"
    "      KC_BOOTSTRAP_ADMIN_USERNAME: admin\n      KC_BOOTSTRAP_ADMIN_PASSWORD: @@",
)
fill(
    "docker_compose_command_flag",
    CONTEXT,
    human_pw(),
    'services:\n  redis:\n    image: redis:7\n    command: ["redis-server", "--requirepass", "@@"]',
)
fill(
    "docker_build_arg_cli",
    CONTEXT,
    pick(36),
    "docker build --build-arg ARTIFACTORY_APIKEY=@@ -t acme/app:1.4 .",
)

# ================================================================ Terraform
fill(
    "tf_variable_default",
    CONTEXT,
    human_pw(),
    'variable "db_password" {\n  type      = string\n  default   = "@@"\n  sensitive = true\n}',
)
fill(
    "tf_provider_keys",
    CONTEXT,
    pick(40, B64S),
    'provider "aws" {\n  region     = "eu-central-1"\n  access_key = "AKIA'
    + pick(16, B36U)
    + '"\n  secret_key = "@@"\n}',
)
fill(
    "tf_db_instance_master_password",
    CONTEXT,
    human_pw(),
    'resource "aws_rds_cluster" "main" {\n  engine          = "aurora-postgresql"\n'
    '  master_username = "root"\n  master_password = "@@"\n}',
)
fill(
    "tf_tfstate_attributes",
    CONTEXT,
    human_pw(),
    '{"mode": "managed", "type": "azurerm_mssql_server", "instances": [{"attributes": '
    '{"administrator_login": "sqladmin", "administrator_login_password": "@@", '
    '"version": "12.0"}}]}',
)
fill(
    "tf_var_env_export",
    CONTEXT,
    pick(40, B64U),
    "export TF_VAR_cloudflare_api_token=@@\nterraform plan -out plan.bin",
)
fill(
    "tf_tfvars_hex_key",
    CONTEXT,
    hx(32),
    'region          = "us1"\ndatadog_api_key = "@@"\ndatadog_app_key = var.app_key',
)
fill(
    "tf_github_provider_token",
    PROVIDER,
    "github_pat_" + pick(22) + "_" + pick(59),
    'provider "github" {\n  owner = "acme"\n  token = "@@"\n}',
)
fill(
    "tf_backend_http_password",
    CONTEXT,
    human_pw(),
    'terraform {\n  backend "http" {\n    address  = "https://tfstate.acme.io/api/v4/projects/9/'
    'terraform/state/prod"\n    username = "tf"\n    password = "@@"\n  }\n}',
)
fill(
    "tf_locals_map",
    CONTEXT,
    pick(44, B64S),
    'locals {\n  smtp = {\n    host = "smtp.sendgrid.net"\n    user = "apikey"\n'
    '    pass = "@@"\n  }\n}',
)
fill(
    "tf_cli_var_json",
    CONTEXT,
    human_pw(),
    'terraform apply -auto-approve -var=\'db={"user":"app","password":"@@"}\'',
)
fill(
    "tf_credentials_rc",
    PROVIDER,
    pick(14) + ".atlasv1." + pick(67, B64U),
    'credentials "app.terraform.io" {\n  token = "@@"\n}',
)

# ================================================================ Kubernetes
fill(
    "k8s_secret_stringdata",
    CONTEXT,
    human_pw(),
    "apiVersion: v1\nkind: Secret\nmetadata:\n  name: pg-auth\ntype: Opaque\nstringData:\n"
    "  username: app\n  password: @@",
)
pw = human_pw()
fill(
    "k8s_secret_data_plain_b64",
    CONTEXT,
    b64_of(pw),
    "apiVersion: v1\nkind: Secret\nmetadata:\n  name: smtp\ndata:\n  SMTP_USER: "
    + b64_of("mailer")
    + "\n  SMTP_PASS: @@",
)
fill(
    "k8s_env_json_pair",
    CONTEXT,
    pick(48, B64U),
    '"env": [{"name": "LOG_LEVEL", "value": "info"}, {"name": "JWT_SECRET", "value": "@@"}]',
)
fill(
    "k8s_kubectl_set_env",
    CONTEXT,
    human_pw(),
    "kubectl set env deployment/api -n prod DB_PASSWORD=@@ DB_HOST=pg-main",
)
fill(
    "k8s_configmap_properties",
    CONTEXT,
    human_pw(),
    "kind: ConfigMap\ndata:\n  application.properties: |\n    server.port=8080\n"
    "    spring.datasource.username=app\n    spring.datasource.password=@@",
)
fill(
    "k8s_helm_values_nested",
    CONTEXT,
    human_pw(),
    "postgresql:\n  enabled: true\n  auth:\n    username: harbor\n    database: registry\n"
    "    postgresPassword: @@",
)
fill(
    "k8s_kubeconfig_user_token",
    CONTEXT,
    pick(52, B62),
    "users:\n- name: ci-deployer\n  user:\n    token: @@\ncontexts:\n- context:\n"
    "    cluster: prod\n    user: ci-deployer",
)
fill(
    "k8s_kubeconfig_client_key_data",
    CONTEXT,
    b64_of(
        "-----BEGIN RSA PRIVATE KEY-----\n" + pem_lines(4) + "\n-----END RSA PRIVATE KEY-----\n"
    ),
    "users:\n- name: admin\n  user:\n    client-certificate-data: "
    + b64_of("-----BEGIN CERTIFICATE-----\n" + pem_lines(2) + "\n-----END CERTIFICATE-----\n")
    + "\n    client-key-data: @@",
)
fill(
    "k8s_kubeconfig_oidc_client_secret",
    CONTEXT,
    pick(32, B62),
    "    auth-provider:\n      name: oidc\n      config:\n        client-id: kubernetes\n"
    "        client-secret: @@\n        idp-issuer-url: https://sso.acme.io/realms/k8s",
)
fill(
    "k8s_argocd_repo_secret",
    PROVIDER,
    "glpat-" + pick(20, B64U),
    "apiVersion: v1\nkind: Secret\nmetadata:\n  labels:\n"
    "    argocd.argoproj.io/secret-type: repository\nstringData:\n"
    "  url: https://gitlab.acme.io/platform/deploy.git\n  password: @@\n  username: argocd",
)
fill(
    "k8s_env_from_literal_list",
    CONTEXT,
    human_pw(),
    "        env:\n        - name: MINIO_ROOT_USER\n          value: admin\n"
    "        - name: MINIO_ROOT_PASSWORD\n          value: @@",
)
fill(
    "k8s_describe_output",
    CONTEXT,
    human_pw(),
    "$ kubectl describe pod api-7c9d-x2 | grep -A3 Environment\n    Environment:\n"
    "      DB_USER:      app\n      DB_PASSWORD:  @@",
)

# ================================================================ XML configs
fill(
    "xml_maven_settings_server",
    CONTEXT,
    human_pw(),
    "<servers>\n  <server>\n    <id>acme-releases</id>\n    <username>deployer</username>\n"
    "    <password>@@</password>\n  </server>\n</servers>",
)
fill(
    "xml_tomcat_users",
    CONTEXT,
    human_pw(),
    '<tomcat-users>\n  <user username="manager" password="@@" roles="manager-gui,admin-gui"/>\n'
    "</tomcat-users>",
)
fill(
    "xml_spring_property_name_value",
    CONTEXT,
    human_pw(),
    '<bean id="dataSource" class="org.apache.commons.dbcp2.BasicDataSource">\n'
    '  <property name="username" value="app"/>\n  <property name="password" value="@@"/>\n'
    "</bean>",
)
fill(
    "xml_hibernate_property_text",
    CONTEXT,
    human_pw(),
    '<property name="hibernate.connection.username">app</property>\n'
    '<property name="hibernate.connection.password">@@</property>',
)
fill(
    "xml_appsettings_signing_key",
    CONTEXT,
    pick(48, B64S),
    '<appSettings>\n  <add key="Environment" value="Production" />\n'
    '  <add key="JwtSigningKey" value="@@" />\n</appSettings>',
)
fill(
    "xml_tomcat_resource",
    CONTEXT,
    human_pw(),
    '<Resource name="jdbc/orders" auth="Container" type="javax.sql.DataSource" '
    'username="orders" password="@@" driverClassName="org.postgresql.Driver" '
    'url="jdbc:postgresql://pg/orders"/>',
)
fill(
    "xml_wsse_password",
    CONTEXT,
    human_pw(),
    "<wsse:UsernameToken>\n  <wsse:Username>partner-api</wsse:Username>\n"
    '  <wsse:Password Type="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-'
    'username-token-profile-1.0#PasswordText">@@</wsse:Password>\n</wsse:UsernameToken>',
)
fill(
    "xml_plist_key_string",
    CONTEXT,
    pick(40),
    "<dict>\n\t<key>BundleId</key>\n\t<string>io.acme.app</string>\n\t<key>RevenueCatSecret"
    "</key>\n\t<string>@@</string>\n</dict>",
)
pw = human_pw()
fill(
    "xml_filezilla_base64_pass",
    CONTEXT,
    b64_of(pw),
    "<Server>\n  <Host>ftp.acme.io</Host>\n  <User>deploy</User>\n"
    '  <Pass encoding="base64">@@</Pass>\n</Server>',
)
fill(
    "xml_wlan_keymaterial",
    CONTEXT,
    human_pw(),
    "<sharedKey>\n  <keyType>passPhrase</keyType>\n  <protected>false</protected>\n"
    "  <keyMaterial>@@</keyMaterial>\n</sharedKey>",
)
fill(
    "xml_android_strings",
    CONTEXT,
    pick(32, B62),
    '<resources>\n  <string name="app_name">Acme</string>\n'
    '  <string name="branch_secret">@@</string>\n</resources>',
)
fill(
    "xml_persistence_property",
    CONTEXT,
    human_pw(),
    '<property name="jakarta.persistence.jdbc.user" value="shop"/>\n'
    '<property name="jakarta.persistence.jdbc.password" value="@@"/>',
)
fill(
    "xml_log4j_smtp_attribute",
    CONTEXT,
    human_pw(),
    '<SMTP name="Mail" subject="prod error" to="ops@acme.io" smtpHost="smtp.acme.io" '
    'smtpUsername="alerts" smtpPassword="@@" bufferSize="50"/>',
)
fill(
    "xml_ant_property",
    CONTEXT,
    human_pw(),
    '<property name="scp.password" value="@@"/>\n<scp file="dist/app.war" '
    'todir="deploy@app01:/opt/tomcat/webapps" password="${scp.password}"/>',
)
fill(
    "xml_html_escaped_in_page",
    CONTEXT,
    human_pw(),
    "<pre>{&quot;user&quot;: &quot;svc-report&quot;, &quot;password&quot;: &quot;@@&quot;}</pre>",
)

# ================================================================ rc files
fill(
    "rc_npmrc_legacy_uuid",
    CONTEXT,
    guid(),
    "registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken=@@\nsave-exact=true",
)
pw = human_pw()
fill(
    "rc_npmrc_password_b64",
    CONTEXT,
    b64_of(pw),
    "@acme:registry=https://npm.acme.io/\n//npm.acme.io/:username=ci\n"
    "//npm.acme.io/:_password=@@\n//npm.acme.io/:email=ci@acme.io",
)
fill(
    "rc_pypirc_private_index",
    CONTEXT,
    human_pw(),
    "[distutils]\nindex-servers =\n    acme\n\n[acme]\nrepository = https://pypi.acme.io/\n"
    "username = release\npassword = @@",
)
fill(
    "rc_netrc_multiline",
    CONTEXT,
    human_pw(),
    "machine artifacts.acme.io\n    login build\n    password @@\n\nmachine api.github.com\n"
    "    login jdoe",
)
fill(
    "rc_netrc_one_line_heroku",
    CONTEXT,
    guid(),
    "machine api.heroku.com login jdoe@acme.io password @@\n"
    "machine git.heroku.com login jdoe@acme.io password ${HEROKU_TOKEN}",
)
fill(
    "rc_yarnrc_yml",
    CONTEXT,
    pick(36),
    'npmScopes:\n  acme:\n    npmRegistryServer: "https://npm.acme.io"\n    npmAuthToken: "@@"',
)
fill(
    "rc_gradle_properties",
    CONTEXT,
    human_pw(),
    "org.gradle.jvmargs=-Xmx2g\nossrhUsername=acme\nossrhPassword=@@\nsigning.keyId=24875D73",
)
fill(
    "rc_s3cfg",
    CONTEXT,
    pick(40, B64S),
    "[default]\naccess_key = AKIA" + pick(16, B36U) + "\nhost_base = s3.amazonaws.com\n"
    "secret_key = @@",
)
fill(
    "rc_aws_credentials_session",
    CONTEXT,
    b64_of(RNG.randbytes(230)),
    "[sso-admin]\naws_access_key_id = ASIA"
    + pick(16, B36U)
    + "\naws_secret_access_key = "
    + pick(40, B64S)
    + "\naws_session_token = @@",
)
fill(
    "rc_boto_gs_secret",
    CONTEXT,
    pick(40, B64S),
    "[Credentials]\ngs_access_key_id = GOOG1E" + pick(55, B36U) + "\ngs_secret_access_key = @@",
)
fill(
    "rc_gh_hosts_yml",
    PROVIDER,
    "gho_" + pick(36),
    "github.com:\n    user: jdoe\n    oauth_token: @@\n    git_protocol: ssh",
)
fill(
    "rc_composer_auth_json",
    CONTEXT,
    human_pw(),
    '{"http-basic": {"repo.packagist.com": {"username": "token", "password": "@@"}}}',
)
fill(
    "rc_my_cnf_mysqldump",
    CONTEXT,
    human_pw(),
    "[mysqldump]\nuser=backup\npassword=@@\nsingle-transaction",
)
fill(
    "rc_wpa_supplicant_psk",
    CONTEXT,
    human_pw(),
    'network={\n    ssid="acme-office"\n    psk="@@"\n    key_mgmt=WPA-PSK\n}',
)
fill(
    "rc_rclone_conf_secret",
    CONTEXT,
    pick(40, B64S),
    "[b2-backup]\ntype = s3\nprovider = Other\naccess_key_id = 004"
    + hx(21)
    + "\nsecret_access_key = @@\nendpoint = s3.eu-central-003.backblazeb2.com",
)
fill(
    "rc_condarc_channel_url",
    CONTEXT,
    human_pw(),
    "channels:\n  - https://conda:@@@conda.acme.io/t/main\n  - conda-forge",
)
fill(
    "rc_docker_config_identitytoken",
    CONTEXT,
    pick(64, B64U),
    '{"auths": {"acme.azurecr.io": {"auth": "MDAwMDAwMDAtMDAwMC0wMDAwLTAwMDAtMDAwMDAwMDAwMDAwOg==",'
    ' "identitytoken": "@@"}}}',
)
fill(
    "rc_git_config_extraheader",
    CONTEXT,
    b64_of("x-access-token:" + "ghs_" + pick(36)),
    '[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic @@',
)

# ================================================================ JDBC / ODBC / driver strings
fill(
    "jdbc_postgres_query_password",
    CONTEXT,
    human_pw(),
    "spring.datasource.url=jdbc:postgresql://pg-main:5432/app?user=app&password=@@&ssl=true",
)
fill(
    "jdbc_sqlserver_semicolons",
    CONTEXT,
    human_pw(),
    "jdbc:sqlserver://sql01.acme.local:1433;databaseName=erp;user=erp_app;password=@@;"
    "encrypt=true;trustServerCertificate=false",
)
fill(
    "jdbc_oracle_thin_slash",
    CONTEXT,
    human_pw(),
    "JDBC_URL=jdbc:oracle:thin:hr/@@@//ora-scan.acme.local:1521/HRPDB",
)
fill(
    "jdbc_snowflake_param",
    CONTEXT,
    human_pw(),
    "jdbc:snowflake://acme-eu.snowflakecomputing.com/?db=ANALYTICS&warehouse=ETL_WH&user=etl"
    "&password=@@",
)
fill(
    "jdbc_redshift_uid_pwd",
    CONTEXT,
    human_pw(),
    "jdbc:redshift://dw.abc123.eu-west-1.redshift.amazonaws.com:5439/dev;UID=loader;PWD=@@",
)
fill(
    "odbc_braced_pwd",
    CONTEXT,
    pick(14, B62) + ";" + pick(6, B62),
    "Driver={ODBC Driver 18 for SQL Server};Server=tcp:acme.database.windows.net,1433;"
    "Database=sales;Uid=reporter;Pwd={@@};Encrypt=yes;",
)
fill(
    "odbc_dsn_uid_pwd",
    CONTEXT,
    human_pw(),
    "conn = pyodbc.connect('DSN=warehouse;UID=etl;PWD=@@')",
)
fill(
    "odbc_access_database_password",
    CONTEXT,
    human_pw(),
    "Provider=Microsoft.ACE.OLEDB.12.0;Data Source=C:\\data\\stock.accdb;"
    "Jet OLEDB:Database Password=@@;",
)
fill(
    "driver_npgsql_keyvalue",
    CONTEXT,
    human_pw(),
    '"ConnectionStrings": {"Default": "Host=pg;Port=5432;Database=shop;Username=shop;'
    'Password=@@;Pooling=true"}',
)
fill(
    "driver_mongodb_srv",
    CONTEXT,
    human_pw(),
    "MONGO_URI=mongodb+srv://svc-api:@@@cluster0.x7k2p.mongodb.net/shop?retryWrites=true&w=majority",
)
fill(
    "driver_go_mysql_dsn",
    CONTEXT,
    human_pw(),
    'db, err := sql.Open("mysql", "orders:@@@tcp(mysql-01:3306)/orders?parseTime=true")',
)
fill(
    "driver_kafka_jaas",
    CONTEXT,
    human_pw(),
    "sasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config=org.apache.kafka.common.security.scram."
    'ScramLoginModule required username="ingest" password="@@";',
)
fill(
    "driver_libpq_quoted_spaces",
    CONTEXT,
    " ".join(RNG.choice(NOUNS) for _ in range(3)) + " " + pick(4, NUM),
    "psql \"host=db.internal dbname=app user=report password='@@' sslmode=require\"",
)
fill(
    "driver_sqlalchemy_mssql_urlenc",
    CONTEXT,
    urllib.parse.quote_plus("Sa#" + pick(10) + "@1"),
    'engine = create_engine("mssql+pyodbc://sa:@@@sql01/erp?driver=ODBC+Driver+18+for+SQL+Server")',
)
fill(
    "driver_python_connect_positional",
    CONTEXT,
    human_pw(),
    'conn = pymysql.connect("db.internal", "reporting", "@@", "analytics")',
)
fill(
    "driver_java_getconnection",
    CONTEXT,
    human_pw(),
    'Connection c = DriverManager.getConnection("jdbc:mysql://db/shop", "shop", "@@");',
)
fill(
    "driver_node_object_literal",
    CONTEXT,
    human_pw(),
    "const pool = mysql.createPool({ host: 'db', user: 'root', password: '@@', database: 'app' });",
)
fill(
    "driver_mongo_create_user",
    CONTEXT,
    human_pw(),
    'db.createUser({ user: "reporting", pwd: "@@", roles: [{ role: "read", db: "shop" }] })',
)
fill(
    "driver_requests_auth_tuple",
    CONTEXT,
    human_pw(),
    'r = requests.get("https://jira.acme.io/rest/api/2/search", auth=("bot", "@@"))',
)
fill(
    "driver_go_smtp_plainauth",
    CONTEXT,
    human_pw(),
    'auth := smtp.PlainAuth("", "alerts@acme.io", "@@", "smtp.gmail.com")',
)
fill(
    "driver_csharp_networkcredential",
    CONTEXT,
    human_pw(),
    'client.Credentials = new NetworkCredential("svc-mail", "@@");',
)
fill(
    "driver_postgres_create_user_plain",
    CONTEXT,
    human_pw(),
    "CREATE USER grafana_reader PASSWORD '@@';",
)
fill(
    "driver_redis_config_set",
    CONTEXT,
    human_pw(),
    'redis-cli CONFIG SET requirepass "@@"',
)

# ================================================================ chat and prose
fill("chat_door_code", CONTEXT, f"{RNG.randint(1000, 9999)}#", "the code is @@ for the side door")
fill("chat_here_you_go", CONTEXT, pick(40), "here you go: @@ (expires friday)")
fill(
    "chat_reset_it_to",
    CONTEXT,
    human_pw(),
    "grafana admin login was broken so I reset it to @@ for now, will rotate after the demo",
)
fill(
    "chat_dm_fallback",
    CONTEXT,
    pick(32, B62),
    "DM'd you the key but slack is eating messages, in case: @@",
)
fill(
    "chat_wifi_key",
    CONTEXT,
    human_pw(),
    "office wifi is acme-5G, the key is @@ (guest network is open)",
)
fill(
    "chat_yubikey_pin", CONTEXT, str(RNG.randint(100000, 999999)), "PIN for the deploy yubikey: @@"
)
fill(
    "chat_passphrase_words",
    CONTEXT,
    " ".join(RNG.choice(NOUNS + ADJS) for _ in range(4)),
    "the passphrase for the backup key is @@ — all lower case, spaces included",
)
fill(
    "chat_login_with",
    CONTEXT,
    human_pw(),
    "login for the test tenant is qa@acme.io with @@",
)
fill(
    "chat_try_with_backticks",
    CONTEXT,
    pick(40, B62),
    "can you try with `@@`? that's the service account's",
)
fill(
    "chat_radius_shared_secret",
    CONTEXT,
    human_pw(),
    "shared secret for the RADIUS server: @@",
)
fill(
    "chat_paste_env_block",
    CONTEXT,
    pick(44, B64U),
    "paste this into your .env and restart:\n```\nLOG_LEVEL=debug\nSIGNING_SECRET=@@\n```",
)
fill(
    "chat_two_sentences",
    CONTEXT,
    human_pw(),
    "The staging DB password changed this morning. New one: @@",
)
fill(
    "chat_bluesky_app_password",
    CONTEXT,
    "-".join(pick(4, B36) for _ in range(4)),
    "made an app password for the release bot on bluesky: @@",
)
fill(
    "chat_gmail_app_password",
    CONTEXT,
    " ".join("".join(RNG.choice(AZ) for _ in range(4)) for _ in range(4)),
    "SMTP via gmail needs an app password, I generated one: @@",
)
fill(
    "chat_apple_app_specific",
    CONTEXT,
    "-".join("".join(RNG.choice(AZ) for _ in range(4)) for _ in range(4)),
    "notarytool store-credentials needs the app-specific password @@ for ci@acme.io",
)
fill(
    "chat_seed_phrase",
    CONTEXT,
    " ".join(
        RNG.choice(
            [
                "absorb",
                "orbit",
                "velvet",
                "timber",
                "ozone",
                "clutch",
                "rapid",
                "shiver",
                "cabin",
                "mosquito",
                "trend",
                "wreck",
                "hobby",
                "glance",
                "fiscal",
                "nephew",
            ]
        )
        for _ in range(12)
    ),
    "testnet deployer seed phrase (no real funds): @@",
)
fill(
    "chat_unlabelled_aws_pair",
    CONTEXT,
    pick(40, B64S),
    "AKIA" + pick(16, B36U) + " / @@ — bucket is acme-exports",
)
fill(
    "chat_user_pass_slash_inline",
    CONTEXT,
    human_pw(),
    "jenkins is back, admin/@@ until LDAP is wired",
)
fill(
    "chat_quote_reply",
    CONTEXT,
    human_pw(),
    "> what's the password for the pgbouncer admin?\n@@ — it's in the vault too",
)

# ================================================================ stack traces
fill(
    "trace_python_locals",
    CONTEXT,
    human_pw(),
    'Traceback (most recent call last):\n  File "/app/sync.py", line 88, in login\n'
    "    session.post(url, data=form)\n    form = {'user': 'sync', 'pass': '@@'}\n"
    "requests.exceptions.ConnectionError: ('Connection aborted.', RemoteDisconnected())",
)
fill(
    "trace_rich_locals_box",
    CONTEXT,
    human_pw(),
    "│ ╭──────────────── locals ────────────────╮ │\n│ │ api_secret = '@@' │ │\n"
    "│ │   retries = 3                          │ │",
)
fill(
    "trace_url_in_exception",
    CONTEXT,
    pick(32, B62),
    "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='api.acme.io', port=443): "
    "Max retries exceeded with url: /v2/export?format=csv&apikey=@@ (Caused by "
    "NewConnectionError('Failed to establish a new connection'))",
)
fill(
    "trace_psycopg_dsn",
    CONTEXT,
    human_pw(),
    "psycopg2.OperationalError: could not connect to server: Connection refused\n"
    "DETAIL: dsn='host=10.0.3.7 port=5432 dbname=ledger user=ledger password=@@'",
)
fill(
    "trace_axios_error_headers",
    CONTEXT,
    pick(40, B62),
    "AxiosError: Request failed with status code 502\n  config: {\n    headers: {\n"
    "      Accept: 'application/json',\n      Authorization: 'Bearer @@'\n    },\n"
    "    url: 'https://billing.acme.io/v1/invoices'",
)
fill(
    "trace_java_tostring",
    CONTEXT,
    pick(32, B62),
    "java.lang.IllegalStateException: invalid config MailConfig(host=smtp.acme.io, port=587, "
    "user=alerts, apiSecret=@@, tls=true)\n\tat io.acme.mail.Sender.<init>(Sender.java:41)",
)
fill(
    "trace_python_dataclass_repr",
    CONTEXT,
    human_pw(),
    "pydantic_core._pydantic_core.ValidationError: 1 validation error for Settings\n"
    "  input_value={'db_host': 'pg', 'db_password': '@@', 'debug': 'maybe'}",
)
fill(
    "trace_go_panic_dsn",
    CONTEXT,
    human_pw(),
    'panic: Error 1045 (28000): Access denied for dsn "billing:@@@tcp(10.0.0.9:3306)/billing"\n'
    "\ngoroutine 1 [running]:\nmain.main()\n\t/src/cmd/api/main.go:42 +0x1d4",
)
fill(
    "trace_ruby_redis_url",
    CONTEXT,
    human_pw(),
    "Redis::CannotConnectError: Error connecting to Redis on redis://:@@@cache.internal:6379/0 "
    "(Errno::ECONNREFUSED)\n  from /usr/local/bundle/gems/redis-5.0.8/lib/redis/client.rb:80",
)
fill(
    "trace_node_env_dump",
    CONTEXT,
    pick(36, B62),
    "TypeError: Cannot read properties of undefined (reading 'id')\n    at handler "
    "(/srv/app/index.js:17:22)\nprocess.env: { NODE_ENV: 'production', SHOPIFY_API_SECRET: "
    "'@@', PORT: '3000' }",
)
fill(
    "trace_php_args",
    CONTEXT,
    human_pw(),
    "PDOException: SQLSTATE[HY000] [1045] Access denied for user 'shop'@'10.0.0.4'\n"
    "#0 /var/www/src/Db.php(22): PDO->__construct('mysql:host=db;d...', 'shop', '@@')",
)

# ================================================================ log lines
fill(
    "log_nginx_access_query",
    CONTEXT,
    pick(40, B62),
    '10.1.4.22 - - [01/Dec/2026:10:14:03 +0000] "GET /api/v1/export?session_token=@@&fmt=csv '
    'HTTP/1.1" 200 48213 "-" "python-requests/2.32"',
)
fill(
    "log_json_headers",
    CONTEXT,
    pick(40, B62),
    '{"level":"debug","ts":"2026-12-01T10:14:03Z","msg":"outbound request","method":"POST",'
    '"headers":{"content-type":"application/json","x-api-key":"@@"}}',
)
fill(
    "log_logfmt_pair",
    CONTEXT,
    pick(32, B62),
    'ts=2026-12-01T10:14:03Z level=debug msg="webhook verified" provider=acme '
    "signing_secret=@@ dur=3ms",
)
fill(
    "log_rails_params_unfiltered",
    CONTEXT,
    human_pw(),
    'Started POST "/users/sign_in" for 10.0.0.5\nProcessing by SessionsController#create\n'
    '  Parameters: {"user"=>{"email"=>"ops@acme.io", "password"=>"@@"}, "commit"=>"Log in"}',
)
fill(
    "log_django_meta_header",
    CONTEXT,
    hx(40),
    "{'CONTENT_TYPE': 'application/json', 'HTTP_AUTHORIZATION': 'Token @@', "
    "'HTTP_HOST': 'api.acme.io'}",
)
fill(
    "log_sudo_command",
    CONTEXT,
    human_pw(),
    "Dec  1 10:14:03 db01 sudo:   jdoe : TTY=pts/0 ; PWD=/home/jdoe ; USER=root ; "
    "COMMAND=/usr/bin/mysqladmin -u root -p@@ flush-hosts",
)
fill(
    "log_curl_verbose_basic",
    CONTEXT,
    b64_of("ci:" + human_pw()),
    "> GET /artifactory/api/repositories HTTP/1.1\n> Host: art.acme.io\n"
    "> Authorization: Basic @@\n> User-Agent: curl/8.5.0",
)
fill(
    "log_requests_debug_body",
    CONTEXT,
    pick(40, B64U),
    "send: b'POST /oauth/token HTTP/1.1\\r\\nHost: sso.acme.io\\r\\n\\r\\n"
    "grant_type=client_credentials&client_id=reports&client_secret=@@'",
)
fill(
    "log_java_map_tostring",
    CONTEXT,
    human_pw(),
    "2026-12-01 10:14:03.117 INFO  [main] c.a.DataSourceConfig - datasource: "
    "{url=jdbc:mariadb://db/app, username=app, password=@@, maxPool=20}",
)
fill(
    "log_cloudtrail_request_parameters",
    CONTEXT,
    human_pw(),
    '{"eventName": "CreateLoginProfile", "requestParameters": {"userName": "contractor-3", '
    '"password": "@@", "passwordResetRequired": false}}',
)
fill(
    "log_docker_inspect_env",
    CONTEXT,
    human_pw(),
    '"Env": [\n    "PATH=/usr/local/sbin:/usr/local/bin",\n    "MYSQL_ROOT_PASSWORD=@@",\n'
    '    "MYSQL_DATABASE=wp"\n]',
)
fill(
    "log_syslog_connection_url",
    CONTEXT,
    human_pw(),
    "Dec  1 10:14:05 worker3 celery[812]: consumer: Cannot connect to "
    "amqp://celery:@@@rabbit-0:5672//: [Errno 111] Connection refused.",
)
fill(
    "log_audit_query_bound",
    CONTEXT,
    human_pw(),
    "2026-12-01 10:14:03 UTC [4411] LOG:  statement: ALTER USER report WITH PASSWORD '@@'",
)
fill(
    "log_websocket_url_token",
    CONTEXT,
    pick(48, B64U),
    "WebSocket connection to 'wss://rt.acme.io/socket?vsn=2.0.0&auth=@@' failed",
)
fill(
    "log_k8s_event_env",
    CONTEXT,
    pick(32, B62),
    'Warning  Failed  12s  kubelet  Error: failed to start container "api": '
    'exec: "--api-secret=@@": executable file not found in $PATH',
)

# ================================================================ file names in text
fill(
    "file_git_add_token_name",
    PROVIDER,
    "ghp_" + pick(36),
    "git add config/cache/@@.json && git commit -m 'cache'",
)
fill(
    "file_ls_listing",
    PROVIDER,
    "sk_live_" + pick(24),
    "$ ls backups/\n2026-11-30.tar.gz  stripe-@@.bak  README",
)
fill(
    "file_rename_diff",
    PROVIDER,
    "xoxb-"
    + str(RNG.randint(10**11, 10**12))
    + "-"
    + str(RNG.randint(10**11, 10**12))
    + "-"
    + pick(24),
    "rename from tokens/old.txt\nrename to tokens/@@.txt",
)
fill(
    "file_path_in_trace",
    PROVIDER,
    "AKIA" + pick(16, B36U),
    "FileNotFoundError: [Errno 2] No such file or directory: '/home/ci/.aws/@@/credentials'",
)
fill(
    "file_url_path_key",
    PROVIDER,
    "AIza" + pick(35, B64U),
    "wget https://storage.googleapis.com/acme-public/@@/bundle.js",
)

# ================================================================ disguised: split
tok = "glpat-" + pick(20, B64U)
put(
    "split_heredoc_lines",
    CONTEXT,
    f"cat > token.txt <<'EOF'\n{tok[:14]}\n{tok[14:]}\nEOF",
    tok,
    parts=[tok[:14], tok[14:]],
)
pw = pick(28)
put(
    "split_c_adjacent_strings",
    CONTEXT,
    f'static const char *API_KEY = "{pw[:14]}" "{pw[14:]}";',
    pw,
    parts=[pw[:14], pw[14:]],
)
tok = "sk-ant-api03-" + pick(60, B64U)
put(
    "split_terraform_join",
    CONTEXT,
    f'anthropic_key = join("", ["{tok[:30]}", "{tok[30:]}"])',
    tok,
    parts=[tok[:30], tok[30:]],
)
tok = "xoxp-" + "-".join(str(RNG.randint(10**11, 10**12)) for _ in range(3)) + "-" + hx(32)
put(
    "split_ruby_backslash_concat",
    CONTEXT,
    f"SLACK_TOKEN = '{tok[:25]}' \\\n  '{tok[25:]}'",
    tok,
    parts=[tok[:25], tok[25:]],
)
pw = pick(32)
put(
    "split_csharp_plus_lines",
    CONTEXT,
    f'var secret = "{pw[:16]}" +\n             "{pw[16:]}";',
    pw,
    parts=[pw[:16], pw[16:]],
)
tok = "AKIA" + pick(16, B36U)
sec = pick(40, B64S)
put(
    "split_yaml_literal_block",
    CONTEXT,
    f"aws_secret: |\n  {sec[:20]}\n  {sec[20:]}",
    sec,
    parts=[sec[:20], sec[20:]],
)
tok = "hf_" + pick(34, string.ascii_letters)
put(
    "split_quoted_printable",
    CONTEXT,
    "Content-Transfer-Encoding: quoted-printable\n\nHi Sam, your access token for the model hub=\n"
    f" is {tok[:19]}=\n{tok[19:]} =E2=80=94 keep it safe.",
    tok,
    parts=[tok[:19], tok[19:]],
)
pw = pick(30)
put(
    "split_bash_two_vars",
    CONTEXT,
    f"P1={pw[:15]}\nP2={pw[15:]}\nexport API_PASSWORD=$P1$P2",
    pw,
    parts=[pw[:15], pw[15:]],
)
tok = "npm_" + pick(36)
put(
    "split_js_template_literal",
    CONTEXT,
    f"const npmToken = `${{'{tok[:20]}'}}{tok[20:]}`;",
    tok,
    parts=[tok[:20], tok[20:]],
)
pw = pick(26)
put(
    "split_kotlin_plus",
    CONTEXT,
    f'val clientSecret = "{pw[:13]}" + "{pw[13:]}"',
    pw,
    parts=[pw[:13], pw[13:]],
)

# ================================================================ disguised: encoded
tok = "ghp_" + pick(36)
fill(
    "enc_hex_xxd",
    CONTEXT,
    binascii.hexlify(tok.encode()).decode(),
    "echo @@ | xxd -r -p > ~/.config/hub-token",
)
pw = human_pw()
fill(
    "enc_base64_echo_decode_plain",
    CONTEXT,
    b64_of(pw),
    "DB_PASS=$(echo @@ | base64 --decode)",
)
fill(
    "enc_base64url_json_creds",
    CONTEXT,
    b64_of(
        json.dumps({"client_id": "reports", "client_secret": pick(40)}), urlsafe=True, strip=True
    ),
    "X-Creds: @@",
)
tok = "sk_live_" + pick(40)
fill(
    "enc_double_urlencoded",
    CONTEXT,
    urllib.parse.quote(urllib.parse.quote(f"key={tok}&mode=live", safe=""), safe=""),
    "GET /redirect?next=%2Fpay%3Fcfg%3D@@ HTTP/1.1",
)
pw = "p@" + pick(10) + "!:#"
fill(
    "enc_urlencoded_form_field",
    CONTEXT,
    urllib.parse.quote_plus(pw),
    "POST /login HTTP/1.1\nContent-Type: application/x-www-form-urlencoded\n\n"
    "username=ops&passwd=@@&remember=1",
)
fill(
    "enc_python_bytes_repr",
    CONTEXT,
    "".join(f"\\x{b:02x}" for b in RNG.randbytes(24)),
    "SECRET_KEY = b'@@'",
)
fill(
    "enc_json_unicode_escaped",
    CONTEXT,
    pick(14) + "\\u0026" + pick(10),
    '{"smtp_password": "@@"}',
)
fill(
    "enc_b64_keystore_one_line",
    CONTEXT,
    b64_of(RNG.randbytes(96)),
    "ANDROID_KEYSTORE_B64=@@",
)
kv = b64_of(RNG.randbytes(120))
lines = [kv[i : i + 64] for i in range(0, len(kv), 64)]
put(
    "enc_b64_wrapped_binary_key",
    CONTEXT,
    "SIGNING_KEYSTORE: |\n  " + "\n  ".join(lines),
    kv,
    parts=lines,
)
fill(
    "enc_html_entity_amp",
    CONTEXT,
    human_pw(),
    '<a href="https://db-admin.acme.io/?user=root&amp;password=@@&amp;db=main">adminer</a>',
)

# ================================================================ formats new to set 5
fill(
    "new_slack_config_token",
    PROVIDER,
    "xoxe.xoxp-1-" + pick(140, B62),
    "SLACK_CONFIG_TOKEN=@@",
)
fill(
    "new_matrix_access_token",
    PROVIDER,
    "syt_"
    + b64_of("releasebot", strip=True)
    + "_"
    + pick(20, string.ascii_letters)
    + "_"
    + pick(6),
    "curl -H 'Authorization: Bearer @@' https://matrix.acme.io/_matrix/client/v3/sync",
)
fill(
    "new_plaid_access_token",
    PROVIDER,
    "access-production-" + guid(),
    "plaid item linked, access token @@ stored for user 4412",
)
fill(
    "new_langfuse_secret_key",
    PROVIDER,
    "sk-lf-" + guid(),
    'Langfuse(public_key="pk-lf-' + guid() + '", secret_key="@@")',
)
fill(
    "new_runway_key",
    PROVIDER,
    "key_" + hx(128),
    "RUNWAYML_API_SECRET=@@",
)
fill(
    "new_solana_keypair_array",
    CONTEXT,
    "[" + ",".join(str(b) for b in RNG.randbytes(64)) + "]",
    "$ cat ~/.config/solana/id.json\n@@",
)
fill(
    "new_ethereum_key_0x_prose",
    CONTEXT,
    "0x" + hx(64),
    "funded the deployer on sepolia, its key is @@",
)
fill(
    "new_zulip_api_key",
    CONTEXT,
    pick(32, B62),
    "[api]\nemail=deploy-bot@acme.zulipchat.com\nkey=@@\nsite=https://acme.zulipchat.com",
)
fill(
    "new_mastodon_token",
    CONTEXT,
    pick(43, B64U),
    "Mastodon.py: api = Mastodon(access_token='@@', api_base_url='https://hachyderm.io')",
)
fill(
    "new_steam_web_api_key",
    CONTEXT,
    pick(32, "0123456789ABCDEF"),
    "https://api.steampowered.com/ISteamUser/GetPlayerSummaries/v2/?key=@@&steamids=7656",
)
fill(
    "new_virustotal_key",
    CONTEXT,
    hx(64),
    "vt init   # asked for the API key, gave it @@",
)
fill(
    "new_healthchecks_ping_uuid",
    CONTEXT,
    guid(),
    "0 3 * * * /opt/backup.sh && curl -fsS -m 10 --retry 5 https://hc-ping.com/@@",
)
fill(
    "new_splunk_header_scheme",
    CONTEXT,
    guid(),
    'curl -k https://splunk.acme.io:8088/services/collector -H "Authorization: Splunk @@" '
    '-d \'{"event": "deploy"}\'',
)
fill(
    "new_vault_unseal_shares",
    CONTEXT,
    b64_of(RNG.randbytes(33)),
    "Unseal Key 1: @@\nUnseal Key 2: " + b64_of(RNG.randbytes(33)),
)
fill(
    "new_wireguard_peer_psk",
    CONTEXT,
    b64_of(RNG.randbytes(32)),
    "[Peer]\nPublicKey = " + b64_of(RNG.randbytes(32)) + "\nPresharedKey = @@\n"
    "AllowedIPs = 10.8.0.0/24",
)
fill(
    "new_django_secret_key_unquoted",
    CONTEXT,
    "django-insecure-" + pick(50, AZ + NUM + "!@#$%^&*(-_=+)"),
    "DJANGO_SECRET_KEY=@@",
)
fill(
    "new_fernet_key_prose",
    CONTEXT,
    b64_of(RNG.randbytes(32), urlsafe=True),
    "airflow won't decrypt the connections unless fernet is set to @@ again",
)
fill(
    "new_jwt_hs256_secret_word",
    CONTEXT,
    RNG.choice(ADJS) + RNG.choice(NOUNS) + RNG.choice(NOUNS),
    "JWT_SECRET=@@",
)
fill(
    "new_totp_manual_entry",
    CONTEXT,
    " ".join(pick(4, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(8)),
    "Can't scan the QR? Enter this key manually: @@",
)


def main() -> None:
    out = Path(__file__).with_name("corpus_heldout5.jsonl")
    with out.open("w", encoding="utf-8") as fh:
        for record in RECORDS:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    providers = sum(1 for r in RECORDS if r["shape"] == PROVIDER)
    print(f"wrote {len(RECORDS)} kinds ({providers} by their own shape) to {out}")


if __name__ == "__main__":
    main()
