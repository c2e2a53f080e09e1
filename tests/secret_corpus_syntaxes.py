"""More fakes for the corpus: values in a language's own string syntax (raw strings,
quote-like operators, percent literals, backticks, one-line here-documents), Terraform
blocks, keyword maps, cookies, commands fed a secret on their input, and pairs of a name
and its value (a value cut into two short lines is `tests/test_redact_syntaxes.py`'s: a
fake here holds its secret whole). Generated, never real."""

from __future__ import annotations

from collections.abc import Callable

from tests.secret_corpus import ALNUM, Gen


def families(g: Gen) -> list[tuple[str, Callable[[str], str], str]]:
    t = g.s
    pw = g.password
    return [
        ("rust-raw-string", lambda s: f'let api_key = r#"{s}"#;', t(ALNUM, 32)),
        ("cpp-raw-string", lambda s: f'std::string password = R"({s})";', pw()),
        ("csharp-verbatim", lambda s: f'var password = @"{s}";', pw()),
        ("perl-q-braces", lambda s: f"my $password = q{{{s}}};", pw()),
        ("perl-qq-parens", lambda s: f"my $token = qq({s});", t(ALNUM, 30)),
        ("ruby-percent-q", lambda s: f"password = %q({s})", pw()),
        ("ruby-percent-Q-brackets", lambda s: f"token = %Q[{s}]", t(ALNUM, 30)),
        ("js-backtick", lambda s: f"const password = `{s}`;", pw()),
        ("go-backtick", lambda s: f"apiKey := `{s}`", t(ALNUM, 32)),
        ("ruby-squiggly-heredoc", lambda s: f"password = <<~EOS\n  {s}\nEOS\n", pw()),
        ("php-heredoc", lambda s: f"$password = <<<EOT\n{s}\nEOT;\n", pw()),
        ("shell-cat-heredoc", lambda s: f"export PGPASSWORD=$(cat <<EOF\n{s}\nEOF\n)\n", pw()),
        ("r-pwd-arrow", lambda s: f'pwd <- "{s}"', pw()),
        ("yaml-value-next-line", lambda s: f"password:\n  {s}\nhost: db\n", pw()),
        (
            "terraform-variable-default",
            lambda s: f'variable "db" {{\n  type    = string\n  default = "{s}"\n}}\n',
            t(ALNUM, 24),
        ),
        (
            "terraform-sensitive-variable",
            lambda s: f'variable "db" {{\n  sensitive = true\n  default   = "{s}"\n}}\n',
            pw(),
        ),
        ("edn-keyword-map", lambda s: f'{{:db-pass "{s}" :user "app"}}', pw()),
        (
            "set-cookie-session",
            lambda s: f"< set-cookie: session={s}; Path=/; HttpOnly",
            t(ALNUM, 32),
        ),
        ("cookie-header-sid", lambda s: f"> Cookie: theme=dark; sid={s}", t(ALNUM, 32)),
        ("gh-with-token-herestring", lambda s: f"gh auth login --with-token <<< {s}", t(ALNUM, 36)),
        ("python-pair-list", lambda s: f"[('user', 'bob'), ('password', '{s}')]", pw()),
        ("php-fpm-env", lambda s: f"env[DB_PASSWORD] = {s}", pw()),
        ("dict-under-credentials", lambda s: f'credentials = {{"prod": "{s}"}}', t(ALNUM, 30)),
        # a short drawn password handed to a program mid-line, or on a line of a diff
        (
            "docker-run-env-mid-line",
            lambda s: f"docker run -d -e PASS={s} -p 80:80 nginx",
            "%ioDnkHI",
        ),
        ("java-system-property", lambda s: f"java -Ddb.password={s} -jar app.jar", "Xk9#mQ2pL"),
        (
            "diff-added-env-line",
            lambda s: f"--- a/.env\n+++ b/.env\n@@ -1 +1 @@\n+PWD={s}",
            "64cXQ&;L",
        ),
        (
            "pgpass-line-echoed",
            lambda s: f"echo 'db.internal:5432:*:dbadmin:{s}' >> ~/.pgpass",
            "nCtt&n6k=faqD@",
        ),
        (
            "pgpass-line-in-diff",
            lambda s: f"@@ -0,0 +1 @@\n+db.internal:6432:app:ci:{s}",
            "CHLn;#:x7",
        ),
        (
            "diff-removed-yaml-line",
            lambda s: f"@@ -3,2 +3,2 @@ db:\n-  password: {s}\n",
            ":$,%zJ5%+9$F&H",
        ),
    ]
