//! Secrets never show: not in output, errors, logs at trace level, or `config show`.

use crate::{Home, run};

const CANARY: &str = "canary-5d1e0b7f";

/// Every command, at trace level, with a canary secret given three ways (a literal, an
/// environment variable and a file): the canary shows in no stream of any of them.
#[test]
fn a_canary_secret_never_appears() {
    let home = Home::new();
    let file = home.write("token", CANARY);
    let home = home.with_config(&format!(
        "compiled:\n  memory:\n    secrets:\n      LITERAL: \"{CANARY}\"\n      FROM_ENV: env:OMNIAGENT_CANARY\n      FROM_FILE: file:{}\n      BROKEN: env:OMNIAGENT_TEST_UNSET\n",
        file.display()
    ));
    let commands: &[&[&str]] = &[
        &["-vvv", "tools", "list"],
        &["-vvv", "--json", "tools", "list"],
        &["-vvv", "tools", "call", "memory__remember", "--args", r#"{"key":"k","value":"v"}"#],
        &["-vvv", "tools", "call", "memory__recall", "--args", r#"{"key":"missing"}"#],
        &["-vvv", "tools", "call", "memory__nope"],
        &["-vvv", "config", "show"],
        &["-vvv", "--json", "config", "show"],
        &["-vvv", "config", "check"],
        &["-vvv", "--json", "config", "check"],
    ];
    for args in commands {
        let mut command = home.omniagent(args);
        command.env("OMNIAGENT_CANARY", CANARY).env_remove("OMNIAGENT_TEST_UNSET");
        let (_, stdout, stderr) = run(command);
        assert!(!stdout.contains(CANARY), "{args:?} printed the secret:\n{stdout}");
        assert!(!stderr.contains(CANARY), "{args:?} logged the secret:\n{stderr}");
    }
}

/// A bad reference is reported by naming the reference, and a literal by `[REDACTED]`.
#[test]
fn bad_references_name_the_reference_never_a_value() {
    let check = |reference: &str, expect: &str| {
        let home =
            Home::new().with_config(&format!("compiled:\n  memory:\n    secrets:\n      TOKEN: \"{reference}\"\n"));
        let (code, _, stderr) = run(home.omniagent(&["config", "check"]));
        assert_eq!(code, 2, "{stderr}");
        assert_eq!(stderr, format!("error: {}:{expect}\n", home.path().join("config.yaml").display()));
    };
    check(
        &format!("admin:{CANARY}"),
        "4:14: compiled.memory.secrets.TOKEN: the value starts with an unknown secret reference scheme (use \
         `env:NAME`, `file:PATH`, `op://VAULT/ITEM/FIELD`, `literal:VALUE`, or a plain value without a `word:` prefix)",
    );
    check("env:", "4:14: compiled.memory.secrets.TOKEN: secret reference `env:`: expected env:NAME");

    let home = Home::new().with_config("compiled:\n  memory:\n    secrets:\n      TOKEN: op://Private/GitHub/token\n");
    let mut command = home.omniagent(&["config", "check"]);
    command.env("PATH", home.path());
    let (code, stdout, _) = run(command);
    assert_eq!(code, 1);
    assert!(
        stdout.contains(
            "error  compiled.memory.secrets.TOKEN: secret reference `op://Private/GitHub/token`: cannot run the 1Password CLI `op` (entity not found)"
        ),
        "{stdout}"
    );
}
