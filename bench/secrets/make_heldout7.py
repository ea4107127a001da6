"""Held-out set 7: credentials said in prose, printed in logs, and disguised.

    python bench/secrets/make_heldout7.py   # writes corpus_heldout7.jsonl and benign_heldout7.jsonl

Written blind, like set 6 (``make_heldout6.py``, whose ``Gen`` and ``Writer`` it uses), for
issue 17 item 8.  Where set 6 puts values in the files an agent edits, set 7 puts them where an
agent reads them: chat and tickets in several languages, agent transcripts, stack traces, log
lines, HTTP dumps, CI output, file names, source code in a dozen languages; and disguised: split
across lines, concatenated, base64, URL-encoded, hex, JSON- and shell-escaped, in diff hunks and
Markdown tables.  For an encoded value ``secret`` is the encoded form as it appears in the text.
"""

from __future__ import annotations

import base64
import codecs
import json
import string
import sys
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_heldout6 import HERE, Gen, Writer  # noqa: E402


def prose(g: Gen, w: Writer) -> None:
    """A person (or an agent) tells someone the secret."""
    C = "context"
    items = [
        ("slack_message_staging_password", "@dana the staging db password is @@ - don't share"),
        (
            "email_new_account_credentials",
            "Hi Sam,\n\nYour VPN account is ready.\nUser: sam.k\nInitial password: @@\n\nIT",
        ),
        (
            "jira_ticket_comment",
            "*Comment by Ops:* reset done, temporary pw @@ (must change at first login)",
        ),
        ("pr_review_comment", "> nit: you left the real key in the test fixture: `@@`"),
        ("todo_comment_python", "# TODO(jk): move to vault, pw=@@ for now"),
        (
            "commit_message_oops",
            "fix: hardcode smtp creds until secrets manager works\n\nsmtp user relay, pass @@",
        ),
        (
            "agent_transcript_set_password",
            "I've created the admin user. You can log in at http://localhost:8080 with admin / @@.",
        ),
        (
            "agent_transcript_tool_result",
            "[tool_result] wrote .env (3 lines): APP_ENV=dev, APP_DEBUG=1, ADMIN_PASS=@@",
        ),
        ("user_prompt_to_agent", "use this key for the test run, I'll rotate it later: @@"),
        ("meeting_notes_bullet", "- Wi-Fi for the offsite: network `acme-guest`, passphrase @@"),
        (
            "readme_quickstart_login",
            "## Quick start\n\nOpen the dashboard and sign in as `admin` with password `@@`.",
        ),
        ("changelog_entry_leak", "### 2.3.1\n- Default Grafana admin password changed to @@"),
        ("german_chat", "Das Passwort für den Testserver lautet @@"),
        ("french_chat", "Le mot de passe de la base de prod est : @@"),
        ("spanish_chat", "La contraseña del router es @@ , no la cambies"),
        ("portuguese_chat", "senha do painel: @@"),
        ("italian_chat", "la password dell'FTP è @@"),
        ("dutch_chat", "Het wachtwoord van de NAS is @@"),
        ("polish_chat", "Hasło do serwera: @@"),
        ("russian_chat", "Пароль от сервера: @@"),
        ("turkish_chat", "Sunucu şifresi: @@"),
        ("japanese_chat", "ステージングのパスワードは @@ です"),
        ("chinese_chat", "数据库密码是 @@ ，别外传"),
        ("korean_chat", "관리자 비밀번호: @@"),
        ("ukrainian_chat", "Пароль до адмінки: @@"),
        ("swedish_chat", "Lösenordet till wifi:t är @@"),
        ("indonesian_chat", "kata sandi server: @@"),
        ("vietnamese_chat", "mật khẩu máy chủ là @@"),
        ("hindi_chat", "सर्वर का पासवर्ड @@ है"),
        ("arabic_chat", "كلمة المرور للخادم: @@"),
        ("sms_style_2fa_backup", "Backup codes for admin@acme: @@ (each works once)"),
        ("voice_transcript_spelled", "okay so the password is, um, @@, all one word"),
        (
            "issue_template_filled",
            "**Environment**\n- OS: Ubuntu 24.04\n- API key used: @@\n- Version: 2.1",
        ),
        (
            "stackoverflow_question_paste",
            "Why does this fail? `requests.get(url, headers={'apikey': '@@'})` returns 401",
        ),
        (
            "markdown_table_credentials",
            "| service | user | password |\n|---|---|---|\n| grafana | admin | @@ |",
        ),
        (
            "markdown_table_tokens_two_cols",
            "| env | token |\n| --- | --- |\n| staging | @@ |\n| prod | (in vault) |",
        ),
        ("csv_export_credentials", "service,username,password,url\njenkins,ci,@@,https://ci.corp"),
        ("tsv_password_manager_export", "name\tlogin\tpassword\nAWS root\troot@acme.io\t@@"),
        (
            "keepass_xml_export",
            '<Entry><String><Key>Password</Key><Value ProtectMemory="True">@@</Value></String>'
            "</Entry>",
        ),
        ("bitwarden_json_export", '{"login": {"username": "ops", "password": "@@", "totp": null}}'),
        ("ini_like_notes_file", "notes.txt:\nrouter admin -> @@\nprinter admin -> default"),
        ("code_review_suggestion_block", '```suggestion\nAPI_SECRET = "@@"\n```'),
    ]
    for kind, template in items:
        pw = (
            g.password(g.rng.randint(10, 18), "-_.!")
            if "2fa_backup" not in kind
            else (" ".join(f"{g.lower(4)}-{g.lower(4)}" for _ in range(3)))
        )
        w.add(kind, template.replace("@@", pw), pw, C)


def logs(g: Gen, w: Writer) -> None:
    """Secrets printed by programs: traces, logs, HTTP dumps, CI output."""
    C = "context"
    P = "provider"
    pw = g.password(16, "-_")
    w.add(
        "python_traceback_locals",
        'Traceback (most recent call last):\n  File "/app/db.py", line 41, in connect\n'
        f"    conn = psycopg.connect(host=h, user=u, password=p)\n  locals: h='db', u='app', p"
        f"='{pw}'\n"
        "psycopg.OperationalError: connection refused",
        pw,
        C,
    )
    pw = g.password(16, "-_")
    w.add(
        "java_exception_jdbc_url",
        "org.postgresql.util.PSQLException: FATAL: password authentication failed\n"
        f"\tat ... url=jdbc:postgresql://db:5432/app?user=app&password={pw}",
        pw,
        C,
    )
    pw = g.password(14, "-_")
    w.add(
        "node_unhandled_rejection_config",
        "UnhandledPromiseRejection: Error: connect ECONNREFUSED\n"
        f"  config: {{ host: 'mq', user: 'orders', pass: '{pw}', vhost: '/' }}",
        pw,
        C,
    )
    pw = g.password(18, "-_")
    w.add(
        "go_panic_struct_dump",
        f"panic: dial failed: &{{Host:redis.internal Port:6379 Password:{pw} DB:0}}\n\n"
        "goroutine 1 [running]:\nmain.main()\n\t/src/main.go:22 +0x1d",
        pw,
        C,
    )
    pw = g.password(16, "-_")
    w.add(
        "rust_debug_print_struct",
        f'thread \'main\' panicked at src/main.rs:14:5:\nConfig {{ user: "svc", secret: "{pw}"'
        f", port: 443 }}",
        pw,
        C,
    )
    pw = g.password(16, "-_")
    w.add(
        "rails_log_parameters",
        'Started POST "/users/sign_in" for 10.0.0.4\n  Parameters: {"user"=>{"email"=>"a@b.c", '
        f'"password"=>"{pw}"}}, "commit"=>"Log in"}}',
        pw,
        C,
    )
    pw = g.password(16, "-_")
    w.add(
        "nginx_access_log_query_token",
        f'10.1.2.3 - - [02/Mar/2026:10:14:07 +0000] "GET /export?format=csv&access_token={pw} '
        'HTTP/1.1" 200 5120',
        pw,
        C,
    )
    key = g.hex(32)
    w.add(
        "apache_log_api_key_param",
        f'203.0.113.9 - - [02/Mar/2026:10:15:00 +0000] "GET /v2/data?api_key={key} HTTP/2" 200',
        key,
        C,
    )
    basic = base64.b64encode(f"deploy:{g.password(14, '-_')}".encode()).decode()
    w.add(
        "curl_verbose_basic_header",
        f"> GET /api/v1/jobs HTTP/2\n> Host: ci.corp\n> authorization: Basic {basic}\n> user-a"
        f"gent: curl/8.11",
        basic,
        C,
    )
    tok = g.b64url(48)
    w.add(
        "http_request_dump_x_api_key",
        f"POST /ingest HTTP/1.1\r\nHost: logs.example.io\r\nX-Api-Key: {tok}\r\nContent-Length"
        f": 812",
        tok,
        C,
    )
    tok = g.jwt({"sub": "42", "scope": "admin"})
    w.add(
        "browser_devtools_copy_as_fetch",
        f'fetch("https://api.acme.io/me", {{"headers": {{"authorization": "Bearer {tok}"}}}});',
        tok,
        P,
    )
    pw = g.password(16, "-_")
    w.add(
        "terraform_plan_output_attribute",
        f'  + resource "aws_db_instance" "main" {{\n      + password = "{pw}"\n      + usernam'
        f'e = "admin"',
        pw,
        C,
    )
    pw = g.password(16, "-_")
    w.add(
        "ansible_vvv_module_args",
        f'<10.0.0.5> ESTABLISH SSH CONNECTION\nok: [db01] => {{"invocation": {{"module_args":'
        f' {{"login_password": "{pw}", "name": "app"}}}}}}',
        pw,
        C,
    )
    pw = g.password(16, "-_")
    w.add(
        "docker_inspect_env_array",
        f'"Env": [\n    "PATH=/usr/local/sbin:/usr/bin",\n    "RABBITMQ_DEFAULT_PASS={pw}",\n '
        f'   "LANG=C.UTF-8"\n]',
        pw,
        C,
    )
    pw = g.password(16, "-_")
    b = base64.b64encode(pw.encode()).decode()
    w.add(
        "kubectl_get_secret_yaml_data",
        f"apiVersion: v1\ndata:\n  password: {b}\n  username: YWRtaW4=\nkind: Secret",
        b,
        C,
    )
    pw = g.password(16, "-_")
    w.add(
        "printenv_output_in_ci",
        f"$ printenv | sort\nHOME=/root\nHOSTNAME=runner-7\nNEXUS_PASSWORD={pw}\nPATH=/usr/bin",
        pw,
        C,
    )
    pw = g.password(16, "-_")
    w.add(
        "github_actions_log_set_x",
        f"+ docker login -u acme -p {pw} registry.acme.io\nWARNING! Using --password via the C"
        f"LI is insecure.",
        pw,
        C,
    )
    pw = g.password(14, "-_")
    w.add(
        "ftp_session_transcript",
        f"220 ProFTPD Server ready\nUSER backup\n331 Password required\nPASS {pw}\n230 User ba"
        f"ckup logged in",
        pw,
        C,
    )
    plain = base64.b64encode(f"\0mailer\0{g.password(14, '-_')}".encode()).decode()
    w.add(
        "smtp_auth_plain_transcript",
        f"EHLO client\n250-AUTH PLAIN LOGIN\nAUTH PLAIN {plain}\n235 2.7.0 Authentication succ"
        f"essful",
        plain,
        C,
    )
    pw = g.password(14, "-_")
    w.add(
        "imap_login_transcript",
        f'a001 LOGIN "mark@example.com" "{pw}"\na001 OK LOGIN completed',
        pw,
        C,
    )
    pw = g.password(16, "-_")
    w.add("redis_monitor_auth_line", f'1772443200.123456 [0 10.0.0.8:51234] "AUTH" "{pw}"', pw, C)
    pw = g.password(16, "-_")
    w.add(
        "postgres_log_statement_alter",
        f"2026-03-02 10:14:07 UTC [411] LOG:  statement: ALTER USER reporting PASSWORD '{pw}'",
        pw,
        C,
    )
    pw = g.password(16, "-_")
    w.add(
        "mysql_general_log_grant",
        f"2026-03-02T10:14:07Z\t  12 Query\tSET PASSWORD FOR 'app'@'%' = '{pw}'",
        pw,
        C,
    )
    pw = g.password(16, "-_")
    w.add("strace_write_password", f'write(3, "username=svc&password={pw}", 38) = 38', pw, C)
    pw = g.password(16, "-_")
    w.add(
        "journalctl_service_startup",
        f"Mar 02 10:14:07 host app[811]: starting with config {{'db_pw': '{pw}', 'workers': 4}}",
        pw,
        C,
    )
    pw = g.password(16, "-_")
    w.add(
        "pytest_assertion_diff",
        f"E       AssertionError: assert {{'password': '{pw}'}} == {{}}\nE         Left contai"
        f"ns 1 more item",
        pw,
        C,
    )
    pw = g.password(16, "-_")
    w.add("jest_snapshot_failure", f'-   "apiKey": "{pw}",\n+   "apiKey": "[redacted]",', pw, C)
    pw = g.password(16, "-_")
    w.add(
        "structured_json_log_line",
        f'{{"level":"debug","ts":1772443200.1,"msg":"auth","user":"svc","passwd":"{pw}"}}',
        pw,
        C,
    )
    pw = g.password(16, "-_")
    w.add(
        "logfmt_line",
        f'time=2026-03-02T10:14:07Z level=debug msg="login attempt" user=ops pwd={pw}',
        pw,
        C,
    )
    pw = g.password(16, "-_")
    w.add(
        "syslog_sudo_command_line",
        f"Mar  2 10:14:07 web1 sudo: ops : COMMAND=/usr/bin/mysql -uroot -p{pw}",
        pw,
        C,
    )
    pw = g.password(16, "-_")
    w.add(
        "windows_event_log_cmdline", f"Process Command Line: net user svc_backup {pw} /add", pw, C
    )
    tok = g.base62_checksummed("ghp_")
    w.add(
        "git_push_error_with_url",
        f"remote: Invalid username or password.\nfatal: Authentication failed for 'https:/"
        f"/{tok}@github.com/acme/web.git/'",
        tok,
        P,
    )
    pw = g.password(16, "-_")
    w.add(
        "pip_install_verbose_index_url",
        f"Looking in indexes: https://ci:{pw}@pypi.corp.example/simple\nCollecting acme-core=="
        f"2.1.0",
        pw,
        C,
    )
    pw = g.password(16, "-_")
    w.add(
        "maven_debug_server_credentials",
        f"[DEBUG] Using mirror nexus (https://nexus.corp) for central\n[DEBUG]   (f) password "
        f"= {pw}",
        pw,
        C,
    )
    pw = g.password(16, "-_")
    w.add(
        "sentry_breadcrumb_json",
        f'{{"category": "http", "data": {{"url": "/login", "body": "user=ops&pass={pw}"}}}}',
        pw,
        C,
    )
    tok = f"sk_live_51{g.b62(97)}"
    w.add(
        "stripe_key_in_error_message",
        f"stripe.error.AuthenticationError: Invalid API Key provided: {tok}",
        tok,
        P,
    )
    pw = g.password(16, "-_")
    w.add(
        "har_postdata_params",
        f'"postData": {{"mimeType": "application/x-www-form-urlencoded", "params": [{{"name": '
        f'"password", "value": "{pw}"}}]}}',
        pw,
        C,
    )
    pw = g.password(16, "-_")
    w.add(
        "wireshark_follow_http_form",
        f"POST /login HTTP/1.1\nContent-Type: application/x-www-form-urlencoded\n\nusername=ad"
        f"min&password={pw}&remember=1",
        pw,
        C,
    )


def code(g: Gen, w: Writer) -> None:
    """Hardcoded in source, across languages."""
    C = "context"
    items = [
        ("java_string_constant", 'private static final String DB_SECRET = "@@";'),
        ("kotlin_const_val", 'const val SIGNING_SECRET = "@@"'),
        ("csharp_networkcredential", 'var cred = new NetworkCredential("svc", "@@");'),
        ("go_basic_auth_call", 'req.SetBasicAuth("admin", "@@")'),
        ("rust_const_str", 'const HMAC_SECRET: &str = "@@";'),
        ("swift_let_keychain", 'let password = "@@" // TODO keychain'),
        ("php_pdo_constructor", "$pdo = new PDO('mysql:host=db;dbname=shop', 'shop', '@@');"),
        ("ruby_net_smtp_start", "Net::SMTP.start('smtp.corp', 587, 'corp', 'relay', '@@', :login)"),
        ("perl_dbi_connect", 'my $dbh = DBI->connect("dbi:Pg:dbname=app", "app", "@@");'),
        ("lua_redis_auth", 'red:auth("@@")'),
        ("elixir_repo_config", 'config :app, App.Repo,\n  username: "app",\n  password: "@@"'),
        ("scala_slick_config", 'Database.forURL("jdbc:h2:mem", user = "sa", password = "@@")'),
        ("dart_http_header", "headers: {'X-Secret': '@@'},"),
        (
            "r_dbconnect",
            'con <- dbConnect(RPostgres::Postgres(), user = "analyst", password = "@@")',
        ),
        (
            "sql_dblink_connstr",
            "SELECT * FROM dblink('host=db2 user=etl password=@@', 'select 1') AS t(x int);",
        ),
        ("bash_function_default", 'deploy() {\n  local pass="${1:-@@}"\n  scp -o ... "$pass"\n}'),
        (
            "powershell_pscredential",
            '$cred = New-Object PSCredential("CORP\\svc", (ConvertTo-SecureString "@@" -AsPlai'
            "nText -Force))",
        ),
        ("typescript_axios_auth", "axios.get(url, { auth: { username: 'api', password: '@@' } })"),
        ("python_smtplib_login", "server.login('alerts@acme.io', '@@')"),
        ("python_paramiko_connect", "client.connect('10.0.0.9', username='root', password='@@')"),
        ("python_dataclass_default", "@dataclass\nclass Settings:\n    redis_password: str = '@@'"),
        ("python_kwargs_call_pika", "pika.PlainCredentials('orders', '@@')"),
        ("js_object_literal_nested", "module.exports = { db: { user: 'app', pass: '@@' } };"),
        ("c_define_macro", '#define WIFI_PASS "@@"'),
        ("cpp_std_string_init", 'std::string token{"@@"};'),
        ("objective_c_nsstring", 'NSString *apiSecret = @"@@";'),
        ("groovy_jenkins_credentials_inline", "usernamePassword(username: 'ci', password: '@@')"),
        (
            "sql_insert_users_plaintext",
            "INSERT INTO users (email, password) VALUES ('admin@acme.io', '@@');",
        ),
        (
            "graphql_mutation_variables",
            '{"query": "mutation Login($p: String!) { login(password: $p) }", "variables": {"p'
            '": "@@"}}',
        ),
        ("protobuf_text_format", 'credentials {\n  user: "svc"\n  secret: "@@"\n}'),
    ]
    for kind, template in items:
        pw = g.password(g.rng.randint(12, 20), "-_.!")
        w.add(kind, template.replace("@@", pw), pw, C)


def disguised(g: Gen, w: Writer) -> None:
    """Encoded, escaped, split or concatenated values."""
    C = "context"
    P = "provider"
    # split across lines / places
    t = g.base62_checksummed("ghp_")
    a, b = t[:20], t[20:]
    w.add("github_token_split_python_concat", f'TOKEN = ("{a}"\n         "{b}")', t, C, [a, b])
    t = f"sk-ant-api03-{g.b64url(93)}AA"
    a, b = t[:50], t[50:]
    w.add("anthropic_key_split_js_plus", f"const key = '{a}' +\n  '{b}';", t, C, [a, b])
    pw = g.password(20, "-_")
    a, b = pw[:10], pw[10:]
    w.add(
        "password_split_shell_vars", f'P1="{a}"\nP2="{b}"\nmysql -uroot -p"$P1$P2"', pw, C, [a, b]
    )
    t = f"xoxb-{g.digits(12)}-{g.digits(13)}-{g.b62(24)}"
    a, b = t[:25], t[25:]
    w.add("slack_token_properties_continuation", f"slack.token={a}\\\n    {b}", t, C, [a, b])
    t = f"AKIA{g.chars(string.ascii_uppercase + '234567', 16)}"
    a, b = t[:10], t[10:]
    w.add("aws_key_split_yaml_folded", f"key: >-\n  {a}\n  {b}", t, C, [a, b])
    t = f"glpat-{g.b64url(20)}"
    a, b, c = t[:9], t[9:18], t[18:]
    w.add(
        "gitlab_token_split_three_env_vars",
        f"T_A={a}\nT_B={b}\nT_C={c}\nTOKEN=$T_A$T_B$T_C",
        t,
        C,
        [a, b, c],
    )
    pw = g.password(18, "-_")
    a, b = pw[:9], pw[9:]
    w.add("password_split_go_concat", f'pass := "{a}" + "{b}"', pw, C, [a, b])
    t = f"sk-proj-{g.b64url(74)}T3BlbkFJ{g.b64url(74)}"
    parts = [t[i : i + 40] for i in range(0, len(t), 40)]
    w.add(
        "openai_key_wrapped_at_40_in_email",
        "Here is the key (it wrapped):\n" + "\n".join(parts),
        t,
        C,
        parts,
    )
    t = f"npm_{g.b62(36)}"
    a, b = t[:18], t[18:]
    w.add("npm_token_split_js_template", f"const t = `${{'{a}'}}{b}`;", t, C, [a, b])
    pw = g.password(16, "-_")
    a, b = pw[:8], pw[8:]
    w.add("password_split_python_join", f"pw = ''.join(['{a}', '{b}'])", pw, C, [a, b])
    # base64 / hex / url / escapes
    pw = g.password(16, "-_!")
    e = base64.b64encode(pw.encode()).decode()
    w.add(
        "base64_password_in_echo_decode",
        f"echo {e} | base64 -d | sudo -S systemctl restart app",
        e,
        C,
    )
    creds = base64.b64encode(f"ci-bot:{g.password(18, '-_')}".encode()).decode()
    w.add(
        "docker_config_json_auths_auth",
        f'{{"auths": {{"registry.acme.io": {{"auth": "{creds}"}}}}}}',
        creds,
        C,
    )
    t = g.base62_checksummed("ghp_")
    e = base64.b64encode(f"x-access-token:{t}".encode()).decode()
    w.add(
        "base64_basic_header_github_token_extraheader",
        f'git -c http.https://github.com/.extraheader="AUTHORIZATION: basic {e}" fetch',
        e,
        C,
    )
    pw = g.password(16, "-_")
    e = base64.b64encode(json.dumps({"user": "svc", "password": pw}).encode()).decode()
    w.add("base64_json_blob_env", f"APP_CREDENTIALS_B64={e}", e, C)
    pw = g.password(16, "-_")
    e = pw.encode().hex()
    w.add("hex_encoded_password_config", f"db_password_hex = {e}", e, C)
    pw = g.password(16, "-_")
    e = "".join(f"\\x{b:02x}" for b in pw.encode())
    w.add("hex_escaped_c_string", f'static const char pw[] = "{e}";', e, C)
    pw = g.password(16, "!@#$%&+/")
    e = urllib.parse.quote(pw, safe="")
    w.add("url_encoded_password_in_dsn", f"postgresql://app:{e}@db.internal:5432/app", e, C)
    pw = g.password(16, "!@#$%&+/")
    e = urllib.parse.quote(urllib.parse.quote(pw, safe=""), safe="")
    w.add(
        "double_url_encoded_redirect_param", f"https://sso.corp/login?next=%2Fcb%3Fpw%3D{e}", e, C
    )
    pw = g.password(16, "-_")
    e = "".join(f"\\u{ord(c):04x}" for c in pw)
    w.add("json_unicode_escaped_password", f'{{"password": "{e}"}}', e, C)
    t = g.base62_checksummed("ghp_")
    e = json.dumps(json.dumps({"token": t}))
    w.add("json_double_encoded_string", f'{{"body": {e}}}', t, P)
    pw = g.password(16, "-_")
    w.add("shell_single_quote_escaped", f"bash -c 'mysql -uroot -p'\\''{pw}'\\'' -e status'", pw, C)
    pw = g.password(16, "-_")
    e = pw.replace("_", "\\_")
    w.add("markdown_escaped_underscores", f"password: `{e}`", e, C)
    pw = g.password(16, "-_")
    e = "".join(f"&#{ord(c)};" for c in pw)
    w.add("html_decimal_entities_password", f'<input type="hidden" name="pw" value="{e}">', e, C)
    pw = g.password(16, "-_")
    e = codecs.encode(pw, "rot13")
    w.add("rot13_password_comment", f"# rot13 so grep doesn't find it: {e}", e, C)
    pw = g.password(16, "-_")
    e = pw[::-1]
    w.add("reversed_password_code", f"PASSWORD = '{e}'[::-1]", e, C)
    pw = g.password(16, "-_")
    e = base64.b32encode(pw.encode()).decode()
    w.add("base32_password_env", f"SECRET_B32={e}", e, C)
    t = f"AKIA{g.chars(string.ascii_uppercase + '234567', 16)}"
    sec = g.aws_secret()
    e = base64.b64encode(
        f"[default]\naws_access_key_id={t}\naws_secret_access_key={sec}\n".encode()
    ).decode()
    w.add("base64_aws_credentials_file_ci_var", f"AWS_CREDENTIALS_FILE_B64: {e}", e, C)
    pw = g.password(16, "-_")
    e = "=?UTF-8?B?" + base64.b64encode(pw.encode()).decode() + "?="
    w.add("mime_encoded_word_subject", f"Subject: {e}", e, C)
    pw = g.password(18, "-_")
    w.add("yaml_block_literal_password", f"secret: |\n  {pw}\nnext: 1", pw, C)
    pw = g.password(18, "-_")
    w.add("xml_cdata_password", f"<password><![CDATA[{pw}]]></password>", pw, C)
    pw = g.password(18, "-_")
    w.add(
        "heredoc_into_file",
        f"cat > /etc/app/db.pass <<EOF\n{pw}\nEOF\nchmod 600 /etc/app/db.pass",
        pw,
        C,
    )
    pw = g.password(18, "-_")
    w.add(
        "printf_into_pipe_stdin",
        f"printf '%s\\n' '{pw}' | cryptsetup luksOpen /dev/sdb1 vault",
        pw,
        C,
    )
    # diffs
    pw = g.password(18, "-_")
    w.add(
        "diff_hunk_added_env_line",
        f"@@ -3,6 +3,7 @@\n APP_ENV=prod\n-DB_PASSWORD=\n+DB_PASSWORD={pw}\n LOG_LEVEL=info",
        pw,
        C,
    )
    pw = g.password(18, "-_")
    w.add(
        "diff_hunk_removed_secret_line",
        f"--- a/config.yml\n+++ b/config.yml\n@@ -10 +10 @@\n-  password: {pw}\n+  password: "
        f"${{DB_PASSWORD}}",
        pw,
        C,
    )
    t = f"xoxb-{g.digits(12)}-{g.digits(13)}-{g.b62(24)}"
    w.add(
        "git_show_word_diff", f'commit {g.sha()}\n\n[-token: "{t}"-]{{+token: "${{SLACK}}"+}}', t, P
    )
    pw = g.password(18, "-_")
    w.add(
        "patch_email_format",
        f"From: dev@acme.io\nSubject: [PATCH] add ci\n---\n+      - run: ./deploy --pw {pw}",
        pw,
        C,
    )
    pw = g.password(18, "-_")
    w.add("git_stash_show_p", f'$ git stash show -p\n+SMTP_PASSWORD = "{pw}"', pw, C)
    pw = g.password(18, "-_")
    w.add(
        "conflict_markers_both_sides",
        f"<<<<<<< HEAD\npassword: {pw}\n=======\npassword: ${{PW}}\n>>>>>>> fix/secrets",
        pw,
        C,
    )


def file_names(g: Gen, w: Writer) -> None:
    C = "context"
    P = "provider"
    t = g.base62_checksummed("ghp_")
    w.add("file_name_github_token_txt", f"?? {t}.txt", t, P)
    pw = g.password(14, "-_")
    w.add("file_name_password_in_backup_zip", f"backup_pw_{pw}.zip", pw, C)
    t = f"sk-proj-{g.b64url(20)}T3BlbkFJ{g.b64url(20)}"
    w.add("file_name_openai_key_dir", f"create mode 100644 keys/{t}/README", t, P)
    t = f"hf_{g.chars(string.ascii_letters, 34)}"
    w.add("file_name_hf_token_cache_path", f"/home/dev/.cache/huggingface/{t}.token", t, P)
    pw = g.password(14, "-_")
    w.add(
        "file_name_ls_output_password",
        f"-rw------- 1 ops ops 1.1K Mar  2 10:14 prod-db-password-{pw}.txt",
        pw,
        C,
    )
    t = f"glpat-{g.b64url(20)}"
    w.add("file_name_git_status_renamed", f"renamed: tok.txt -> {t}.old", t, P)
    t = f"AKIA{g.chars(string.ascii_uppercase + '234567', 16)}"
    w.add("file_name_aws_csv_download", f"Downloads/{t}_accessKeys.csv", t, P)
    pw = g.password(14, "-_")
    w.add(
        "file_name_tar_listing",
        f"drwx------ root/root 0 2026-03-02 10:14 secrets/admin:{pw}/",
        pw,
        C,
    )


def more_providers(g: Gen, w: Writer) -> None:
    """Formats not in set 6, in the places of this set."""
    P = "provider"
    C = "context"
    t = f"sk-admin-{g.b64url(74)}T3BlbkFJ{g.b64url(74)}"
    w.add("openai_admin_key_chat", f"here's the org admin key, careful: {t}", t, P)
    t = f"glptt-{g.hex(40)}"
    w.add(
        "gitlab_trigger_token_in_log",
        f"Running with gitlab-runner 17.8\n$ curl -F token={t} -F ref=main $URL",
        t,
        P,
    )
    t = f"gloas-{g.hex(64)}"
    w.add("gitlab_oauth_app_secret_ticket", f"OAuth app recreated, new secret {t}", t, P)
    t = f"GR1348941{g.b64url(20)}"
    w.add(
        "gitlab_runner_registration_token_readme",
        f"gitlab-runner register --registration-token {t}",
        t,
        P,
    )
    t = f"hvb.{g.b64url(120)}"
    w.add("vault_batch_token_log", f"2026-03-02T10:14:07Z [INFO] token created: {t}", t, P)
    t = f"s.{g.b62(24)}"
    w.add("vault_legacy_token_chat", f"root token from the init output: {t}", t, C)
    t = f"dp.pt.{g.b62(43)}"
    w.add("doppler_personal_token_transcript", f"Doppler login succeeded. Token: {t}", t, P)
    t = f"doo_v1_{g.hex(64)}"
    w.add("digitalocean_oauth_token_trace", f"Authorization: Bearer {t}\n< HTTP/2 401", t, P)
    t = f"pscale_pw_{g.b64url(43)}"
    w.add(
        "planetscale_password_connection_error",
        f"Error 1045: Access denied for user 'x' using password '{t}'",
        t,
        P,
    )
    t = f"shpca_{g.hex(32)}"
    w.add("shopify_custom_app_token_slack", f"new admin api token for the store: {t}", t, P)
    t = f"sntrys_eyJ{g.b64url(140)}_{g.b64url(43)}"
    w.add(
        "sentry_token_in_vercel_build_log", f"10:14:07.118 SENTRY_AUTH_TOKEN={t} next build", t, P
    )
    t = f"NRII-{g.b64url(32)}"
    w.add("newrelic_insert_key_issue", f"ingest works now with insert key {t}", t, P)
    t = f"glc_eyJ{g.b64(120)}"
    w.add(
        "grafana_cloud_token_transcript",
        f"I set GRAFANA_CLOUD_TOKEN to {t} in your shell profile.",
        t,
        P,
    )
    t = f"sq0atp-{g.b64url(22)}"
    w.add("square_sandbox_access_token_md", f"- access token: `{t}`", t, P)
    t = f"shppa_{g.hex(32)}"
    w.add("shopify_private_app_password_csv", f"store,password\nacme-dev,{t}", t, P)
    t = f"xoxe-1-{g.b62(140)}"
    w.add("slack_refresh_token_log", f"token_rotation: refresh_token={t}", t, P)
    t = f"rk_test_51{g.b62(97)}"
    w.add(
        "stripe_restricted_test_key_chat",
        f"use the restricted key {t} for the webhook replay",
        t,
        P,
    )
    t = f"sk-ant-oat01-{g.b64url(93)}AA"
    w.add(
        "anthropic_oauth_token_credentials_json",
        f'{{"claudeAiOauth": {{"accessToken": "{t}", "expiresAt": 1772449999}}}}',
        t,
        P,
    )
    t = f"sk-ant-ort01-{g.b64url(93)}AA"
    w.add("anthropic_refresh_token_debug_log", f"[debug] oauth refresh ok refreshToken={t}", t, P)
    t = f"AIza{g.b64url(35)}"
    w.add(
        "gemini_key_in_url_error",
        f"google.api_core.exceptions.PermissionDenied: 403 POST https://generativelanguage.goo"
        f"gleapis.com/v1beta/models/gemini-2.5-pro:generateContent?key={t}",
        t,
        P,
    )
    t = f"ghu_{g.b62(36)}"
    w.add(
        "copilot_token_hosts_json",
        f'{{"github.com:Iv1.b507a08c87ecfe98": {{"user": "dev", "oauth_token": "{t}"}}}}',
        t,
        P,
    )
    t = f"xai-{g.b62(80)}"
    w.add("xai_key_in_notebook_output", f"Out[3]: Client(api_key='{t}')", t, P)
    t = f"gsk_{g.b62(52)}"
    w.add("groq_key_in_streamlit_secrets", f'# .streamlit/secrets.toml\nGROQ_API_KEY = "{t}"', t, P)
    t = f"dckr_pat_{g.b64url(27)}"
    w.add("docker_pat_in_transcript", f"Logged in with token {t}. Pushing image...", t, P)
    t = f"nfp_{g.b62(36)}"
    w.add(
        "netlify_token_in_build_plugin_log", f"6:14:07 PM: netlify-plugin-x: using token {t}", t, P
    )
    t = f"ops_eyJ{g.b64url(300)}"
    w.add(
        "onepassword_token_in_github_issue",
        f"Steps to reproduce:\n1. OP_SERVICE_ACCOUNT_TOKEN={t} op vault list",
        t,
        P,
    )
    t = f"figd_{g.b64url(40)}"
    w.add("figma_token_in_mcp_error", f'MCP error -32001: figma auth failed for token "{t}"', t, P)
    t = f"lin_api_{g.b62(40)}"
    w.add("linear_key_in_agent_memory", f"- Linear API key for this repo: {t}", t, P)
    t = f"pcsk_{g.b62(5)}_{g.b62(63)}"
    w.add("pinecone_key_in_colab_output", f"PINECONE_API_KEY: {t}", t, P)
    t = f"r8_{g.b62(37)}"
    w.add(
        "replicate_token_in_curl_history",
        f"  512  curl -s -H 'Authorization: Bearer {t}' https://api.replicate.com/v1/predictions",
        t,
        P,
    )
    t = f"hf_{g.chars(string.ascii_letters, 34)}"
    w.add(
        "hf_token_in_git_remote_url",
        f"origin\thttps://user:{t}@huggingface.co/acme/model (push)",
        t,
        P,
    )
    t = f"pypi-AgEIcHlwaS5vcmcCJ{g.b64url(150)}"
    w.add("pypi_token_in_pypirc_password", f"[pypi]\nusername = __token__\npassword = {t}", t, P)
    t = f"npm_{g.b62(36)}"
    w.add(
        "npm_token_in_npm_debug_log", f"12 verbose headers {{ authorization: 'Bearer {t}' }}", t, P
    )
    t = f"github_pat_11{g.upper(20)}_{g.b62(59)}"
    w.add(
        "fine_grained_pat_in_go_env_goproxy",
        f"GOPRIVATE=github.com/acme\nGOPROXY=https://{t}@goproxy.acme.io",
        t,
        P,
    )
    t = f"EAAG{g.b62(180)}"
    w.add(
        "facebook_token_in_graph_explorer_paste",
        f'curl -i -X GET "https://graph.facebook.com/v21.0/me?fields=id&access_token={t}"',
        t,
        P,
    )
    t = f"{g.hex(32)}"
    w.add("twilio_auth_token_in_sms_script", f"client = Client('AC{g.hex(32)}', '{t}')", t, C)
    t = f"SK{g.hex(32)}"
    w.add(
        "twilio_api_key_sid_with_secret", f"TWILIO_API_KEY={t}\nTWILIO_API_SECRET={g.b62(32)}", t, P
    )
    t = f"AC{g.hex(32)}"
    sec = g.hex(32)
    w.add(
        "twilio_basic_auth_url",
        f"https://{t}:{sec}@api.twilio.com/2010-04-01/Accounts.json",
        sec,
        C,
    )
    t = g.hex(32)
    w.add("datadog_api_key_agent_yaml", f"api_key: {t}\nsite: datadoghq.eu", t, C)
    t = g.hex(40)
    w.add("datadog_app_key_terraform_env", f"export DD_APP_KEY={t}", t, C)
    t = g.b62(40)
    w.add(
        "cloudflare_api_token_wrangler_toml_comment",
        f'# CLOUDFLARE_API_TOKEN={t}\nname = "worker"',
        t,
        C,
    )
    t = g.hex(37)
    w.add(
        "cloudflare_global_key_curl_header",
        f"curl -H 'X-Auth-Email: ops@acme.io' -H 'X-Auth-Key: {t}' https://api.cloudflare.com/"
        f"client/v4/zones",
        t,
        C,
    )
    t = g.uuid()
    w.add("heroku_uuid_key_env_example", f"HEROKU_API_KEY={t}", t, C)
    t = g.uuid()
    w.add("postmark_server_token_header", f"X-Postmark-Server-Token: {t}", t, C)
    t = g.hex(32)
    w.add("algolia_admin_key_docsearch_config", f"APPLICATION_ID=BH4D9OD16A\nAPI_KEY={t}", t, C)
    t = g.hex(64)
    w.add("linode_token_cli_config", f"[DEFAULT]\ntoken = {t}\nregion = eu-central", t, C)
    t = g.b62(64)
    w.add("hetzner_token_hcloud_toml", f'[[contexts]]\nname = "prod"\ntoken = "{t}"', t, C)
    t = f"{g.upper(16)}"
    sec = g.b64(64)
    w.add(
        "confluent_api_secret_cli_output",
        f"+------------+------------------------------------------------------------------+\n|"
        f" API Key    | {t} |\n| API Secret | {sec} |",
        sec,
        C,
    )
    t = g.b62(40)
    w.add("cohere_key_langchain_env", f"COHERE_API_KEY={t}", t, C)
    t = g.b62(32)
    w.add("mistral_key_client_call", f'client = Mistral(api_key="{t}")', t, C)
    t = g.hex(64)
    w.add("together_key_export", f"export TOGETHER_API_KEY={t}", t, C)
    t = f"sk-{g.hex(32)}"
    w.add("deepseek_key_base_url_config", f"base_url: https://api.deepseek.com\napi_key: {t}", t, C)
    t = g.b64url(86)
    w.add("ibm_cloud_api_key_json", f'{{"name": "ci", "apikey": "{t[:44]}"}}', t[:44], C)
    t = g.b64url(22)
    w.add("honeycomb_key_otel_header", f"OTEL_EXPORTER_OTLP_HEADERS=x-honeycomb-team={t}", t, C)
    t = g.b64url(64)
    w.add("auth0_client_secret_nextjs_env", f"AUTH0_CLIENT_SECRET='{t}'", t, C)
    t = g.hex(30)
    w.add("plaid_secret_env", f"PLAID_SECRET={t}\nPLAID_ENV=production", t, C)
    t = f"sk_live_{g.b62(40)}"
    w.add("clerk_secret_key_env", f"CLERK_SECRET_KEY={t}", t, P)
    t = g.b64(44)
    w.add("nextauth_secret_env", f"NEXTAUTH_SECRET={t}", t, C)
    t = "base64:" + g.b64(43) + "="
    w.add("laravel_app_key_env", f"APP_KEY={t}", t, C)
    t = g.hex(128)
    w.add("rails_secret_key_base_output", f"$ bin/rails secret\n{t}", t, C)
    t = "django-insecure-" + g.chars(string.ascii_lowercase + string.digits + "!@#%^&*(-_=+)", 50)
    w.add("django_secret_key_settings", f"SECRET_KEY = '{t}'", t, P)
    t = g.b64(32)
    w.add("flask_secret_key_app_config", f"app.config['SECRET_KEY'] = '{t}'", t, C)
    t = g.hex(64)
    w.add("github_webhook_secret_settings_note", f"Webhook secret (paste into GitHub): {t}", t, C)
    t = (
        f"https://outlook.office.com/webhook/{g.uuid()}@{g.uuid()}/IncomingWebhook/{g.hex(32)}"
        f"/{g.uuid()}"
    )
    w.add("teams_incoming_webhook_url", f"TEAMS_WEBHOOK={t}", t, P)
    t = (
        f"https://prod-12.westeurope.logic.azure.com:443/workflows/{g.hex(32)}/triggers/manual"
        f"/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig"
        f"={g.b64url(43)}"
    )
    w.add("power_automate_workflow_url", f"notify via {t}", t.split("sig=")[1], C)
    t = (
        f"https://chat.googleapis.com/v1/spaces/AAAA{g.b64url(7)}/messages?key=AIz"
        f"a{g.b64url(35)}&token={g.b64url(43)}%3D"
    )
    w.add("google_chat_webhook_url", f"webhook_url: '{t}'", t.split("token=")[1], C)
    t = f"https://api.telegram.org/bot{g.digits(10)}:AA{g.b64url(33)}/sendMessage"
    w.add("telegram_bot_url_in_log", f"POST {t} -> 200", t.split("bot")[1].split("/")[0], P)
    t = f"https://{g.lower(8)}.execute-api.eu-west-1.amazonaws.com/prod/hook?x-api-key={g.b62(40)}"
    w.add("api_gateway_key_in_query", f"curl '{t}'", t.split("x-api-key=")[1], C)
    t = f"https://hooks.zapier.com/hooks/catch/{g.digits(8)}/{g.lower(6)}/"
    w.add("zapier_catch_hook_url", f"ZAPIER_HOOK={t}", t, C)
    t = f"https://{g.lower(10)}.ngrok-free.app"
    tok = f"{g.b62(27)}_{g.b62(21)}"
    w.add("ngrok_authtoken_config", f"version: 3\nagent:\n    authtoken: {tok}", tok, C)
    t = f"tskey-auth-{g.b62(12)}CNTRL-{g.b62(33)}"
    w.add("tailscale_auth_key_cloud_init", f"runcmd:\n  - tailscale up --authkey={t}", t, P)
    t = f"k8s bootstrap token {g.lower(6)}.{g.lower(16)}"
    tok = t.split()[-1]
    w.add(
        "kubeadm_join_token",
        f"kubeadm join 10.0.0.1:6443 --token {tok} --discovery-token-ca-cert-hash sha256"
        f":{g.hex(64)}",
        tok,
        C,
    )
    t = f"K10{g.hex(64)}::server:{g.hex(32)}"
    w.add("k3s_node_token_cat", f"$ sudo cat /var/lib/rancher/k3s/server/node-token\n{t}", t, C)
    t = g.b64(44)
    w.add(
        "vault_unseal_key_init_output", f"Unseal Key 1: {t}\nUnseal Key 2: (stored elsewhere)", t, C
    )
    t = " ".join(
        g.rng.sample(
            [
                "abandon",
                "ability",
                "able",
                "about",
                "above",
                "absent",
                "absorb",
                "abstract",
                "absurd",
                "abuse",
                "access",
                "accident",
                "account",
                "accuse",
                "achieve",
                "acid",
                "acoustic",
                "acquire",
                "across",
                "act",
                "action",
                "actor",
                "actress",
                "actual",
            ],
            12,
        )
    )
    w.add("bip39_mnemonic_wallet_env", f'WALLET_MNEMONIC="{t}"', t, C)
    t = "0x" + g.hex(64)
    w.add("ethereum_private_key_hardhat_config", f'accounts: ["{t}"],', t, C)
    t = g.chars("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz", 51)
    w.add("bitcoin_wif_private_key", f'importprivkey 5{t[:50]} "cold" false', "5" + t[:50], C)
    t = g.b64(32)
    w.add(
        "totp_seed_otpauth_uri",
        f"otpauth://totp/ACME:ops?secret={base64.b32encode(t.encode()).decode().rstrip('=')}&i"
        f"ssuer=ACME",
        base64.b32encode(t.encode()).decode().rstrip("="),
        C,
    )


def benign(g: Gen, w: Writer) -> None:
    S = "heldout7"
    chat = [
        "the staging password is in 1Password under 'Staging DB'",
        "Das Passwort steht im Tresor, frag Ops.",
        "Le mot de passe a été changé hier, voir le coffre.",
        "La contraseña está en Bitwarden.",
        "パスワードは1Passwordにあります",
        "密码已经改了，请看保险库",
        "Пароль в хранилище, спроси у админа.",
        "hasło jest w menedżerze haseł",
        "I reset your password; check your email for the link.",
        "Use your SSO login, there is no separate password.",
        "The token is in the CI variables as DEPLOY_TOKEN.",
        "ping me and I'll share the key over a one-time link",
        "api key rotated, old one revoked at 10:14 UTC",
        "The key looks like sk-... followed by about 160 characters.",
        "your password must be at least 12 characters long",
        "password reset email sent to dana@example.com",
        "New one: see vault path secret/data/prod/api",
        "Token: (redacted)",
        "password: [REDACTED]",
        "API key: ****************abcd",
        "I've set ADMIN_PASSWORD from your .env; I won't print it here.",
        "Login with the credentials from `make creds` (they're generated per run).",
        "admin / admin is the upstream default; we change it at first boot",
        "| service | user | password |\n|---|---|---|\n| grafana | admin | from vault |",
        "| env | token |\n| --- | --- |\n| staging | `$STAGING_TOKEN` |",
        "service,username,password_ref\njenkins,ci,vault:ci/jenkins",
        "Wi-Fi: acme-guest (open network, captive portal)",
        "Backup codes were printed and stored in the safe.",
        "The TOTP secret is enrolled in the YubiKey, not written down.",
        "Passphrase for the disk is held by two people (Shamir split).",
    ]
    for c in chat:
        w.ok(f"{S}:chat", c)
    logs = [
        'psycopg.OperationalError: password authentication failed for user "app"',
        'org.postgresql.util.PSQLException: FATAL: password authentication failed for user "app"',
        "Error 1045 (28000): Access denied for user 'root'@'localhost' (using password: YES)",
        "redis.exceptions.AuthenticationError: invalid username-password pair",
        "fatal: Authentication failed for 'https://github.com/acme/web.git/'",
        "remote: Support for password authentication was removed on August 13, 2021.",
        "WARNING! Using --password via the CLI is insecure. Use --password-stdin.",
        "Login Succeeded",
        '2026-03-02T10:14:07Z level=info msg="auth ok" user=ops method=oidc',
        '{"level":"info","msg":"token refreshed","expires_in":3600}',
        '10.1.2.3 - - [02/Mar/2026:10:14:07 +0000] "GET /healthz HTTP/1.1" 200 2',
        "> authorization: Bearer ***",
        "Set-Cookie: sessionid=; expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/",
        "AUTH PLAIN\n334\n(credentials hidden)",
        "##[group]Run docker/login-action@v3\nwith:\n  registry: ghcr.io\n  username: acme\n  "
        "password: ***",
        "Mar 02 10:14:07 web1 sshd[811]: Accepted publickey for ops from 10.0.0.4 port 51234",
        "Mar 02 10:14:07 web1 sudo: ops : TTY=pts/0 ; PWD=/home/ops ; USER=root ; COMMAND=/usr"
        "/bin/apt update",
        "E       AssertionError: assert 401 == 200",
        "panic: runtime error: invalid memory address or nil pointer dereference",
        "thread 'main' panicked at src/main.rs:14:5: called `Option::unwrap()` on a `None` value",
        'Traceback (most recent call last):\n  File "/app/main.py", line 3, in <module>\nKey'
        "Error: 'DB_PASSWORD'",
        "stripe.error.AuthenticationError: No API key provided.",
        "openai.AuthenticationError: Error code: 401 - Incorrect API key provided: sk-proj-***"
        "*...abcd",
        "google.api_core.exceptions.PermissionDenied: 403 API key not valid. Please pass a val"
        "id API key.",
        'Parameters: {"user"=>{"email"=>"a@b.c", "password"=>"[FILTERED]"}}',
        '"postData": {"params": [{"name": "password", "value": "[masked]"}]}',
        "+ docker login -u acme -p *** registry.acme.io",
        "Looking in indexes: https://pypi.org/simple, https://ci:****@pypi.corp.example/simple",
        "[DEBUG]   (f) password = ***",
        "kubectl get secret db -o yaml  # data keys: password, username",
    ]
    for line in logs:
        w.ok(f"{S}:log", line)
    code = [
        "password = getpass.getpass('Password: ')",
        'String pw = System.getenv("DB_PASSWORD");',
        "var cred = new NetworkCredential(user, password);",
        'req.SetBasicAuth(user, os.Getenv("ADMIN_PASS"))',
        'let token = env::var("API_TOKEN")?;',
        "$pdo = new PDO($dsn, $user, getenv('DB_PASS'));",
        "client.connect(host, username=user, key_filename='~/.ssh/id_ed25519')",
        "server.login(user, app_password)",
        "const { password } = await inquirer.prompt([{ type: 'password', name: 'password' }]);",
        "#define WIFI_PASS CONFIG_WIFI_PASSWORD",
        "SECRET_KEY = os.environ['DJANGO_SECRET_KEY']",
        "app.config['SECRET_KEY'] = secrets.token_hex(32)",
        "token = secrets.token_urlsafe(32)",
        "if (password.length < 12) throw new Error('too short');",
        "assert hash_password('correct horse') != 'correct horse'",
        "INSERT INTO users (email, password_hash) VALUES ($1, $2);",
        "CREATE USER app WITH PASSWORD :'app_password';",
        "ALTER ROLE analytics WITH LOGIN PASSWORD NULL;",
        "mutation Login($p: String!) { login(password: $p) { token } }",
        'private static final String PASSWORD_FIELD = "password";',
        "const TOKEN_HEADER = 'X-Api-Token';",
        'pass := os.Getenv("P1") + os.Getenv("P2")',
        "pw = ''.join(secrets.choice(alphabet) for _ in range(20))",
        'echo "$B64" | base64 -d > key.json',
        "PASSWORD = os.environ['PASSWORD_REVERSED'][::-1]",
    ]
    for c in code:
        w.ok(f"{S}:code", c)
    more = [
        "Bitte das Passwort nie in Tickets schreiben.",
        "Le jeton d'accès expire après une heure.",
        "La clave de API se genera en el panel de control.",
        "Sunucu şifresi kasada saklanıyor.",
        "관리자 비밀번호는 금고에 있습니다",
        "Lösenordet finns i lösenordshanteraren.",
        "De API-sleutel staat in de kluis.",
        "kata sandi disimpan di vault",
        "- [x] rotate the Slack bot token\n- [ ] rotate the Stripe key",
        "```bash\nexport OPENAI_API_KEY=...\n```",
        "> nit: load the key from the environment instead of hardcoding it",
        "# TODO(jk): move credentials to vault (ticket OPS-1412)",
        "fix: stop logging the Authorization header",
        "docs: explain how to create a GitLab PAT with read_api scope",
        "chore(deps): bump jsonwebtoken from 9.0.1 to 9.0.2",
        "Secrets are mounted at /var/run/secrets/app; nothing is in the image.",
        "The webhook URL lives in the SLACK_WEBHOOK_URL secret of the repo.",
        "kubeconfig uses exec: aws eks get-token, no static token",
        "The private key never leaves the HSM.",
        "SSH host key fingerprints are pinned in known_hosts.",
    ]
    for line in more:
        w.ok(f"{S}:prose", line)
    for i in range(120):
        u = g.uuid()
        h = g.hex(64)
        sha = g.sha()
        forms = [
            f"base64 of the logo:"
            f" {base64.b64encode(bytes(g.rng.getrandbits(8) for _ in range(45))).decode()}",
            f"Correlation ID: {u}",
            f"@@ -{i + 3},6 +{i + 3},7 @@ def load_config(path):",
            f"index {sha[:12]}..{g.sha()[:12]} 100644",
            f'-version = "1.{i}.0"\n+version = "1.{i + 1}.0"',
            f"digest: sha256:{h}",
            f"?? notes/2026-03-{(i % 28) + 1:02d}-retro.md",
            f"renamed: old/{g.lower(8)}.py -> new/{g.lower(8)}.py",
            f"-rw-r--r-- 1 ops ops 1.1K Mar  2 10:14 report-{g.digits(6)}.csv",
            f"Downloads/invoice_{g.digits(8)}.pdf",
            f"create mode 100644 assets/{g.hex(8)}.png",
            f"backup_{g.digits(8)}T{g.digits(6)}Z.tar.zst",
            f"https://example.com/files/{u}/preview",
            f"x-amz-cf-id: {g.b64url(56)}==",
            f"Subject: =?UTF-8?B?{base64.b64encode(f'Weekly report {i}'.encode()).decode()}?=",
            f'<input type="hidden" name="csrf{i}" value="{{{{ csrf_token }}}}">',
            f"%2Fapi%2Fv1%2Fitems%3Fpage%3D{i}",
            f"\\u0048\\u0065\\u006c\\u006c\\u006f #{i}",
            f"hex dump: {g.hex(32)}",
            f"otpauth://totp/ACME:ops?secret=<SEED>&issuer=ACME #{i}",
        ]
        w.ok(f"{S}:lookalike", forms[i % len(forms)])
    for i in range(55):
        t = [
            f"commit {g.sha()}\nMerge: {g.sha()[:7]} {g.sha()[:7]}",
            f"<<<<<<< HEAD\nversion: 1.{i}.0\n=======\nversion: 1.{i + 1}.0\n>>>>>>> main",
            f"From {g.sha()} Mon Sep 17 00:00:00 2001\nSubject: [PATCH {i}/9] docs: typo",
            f"| build | {g.sha()[:7]} | passed |",
            f"Wallet address: 0x{g.hex(40)}",
            f"bc1q{g.chars('qpzry9x8gf2tvdw0s3jn54khce6mua7l', 38)}",
        ]
        w.ok(f"{S}:vcs", t[i % len(t)])
    for i in range(20):
        forms = [
            f"kubeadm token create --print-join-command  # run #{i}",
            f"tailscale up --authkey=$TS_AUTHKEY --hostname=node-{i}",
            f"ngrok http {8000 + i}",
            f"vault operator unseal  # key {i // 5 + 1}, typed by its holder",
            f"gitlab-runner register --url https://gitlab.com --token $RUNNER_TOKEN  # runner {i}",
        ]
        w.ok(f"{S}:ops", forms[i % len(forms)])


def main() -> None:
    g = Gen(20260307)
    w = Writer()
    prose(g, w)
    logs(g, w)
    code(g, w)
    disguised(g, w)
    file_names(g, w)
    more_providers(g, w)
    benign(g, w)
    w.write(HERE / "corpus_heldout7.jsonl", HERE / "benign_heldout7.jsonl")


if __name__ == "__main__":
    main()
