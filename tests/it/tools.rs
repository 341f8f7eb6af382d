//! `omniagent tools list`, `omniagent tools search` and `omniagent tools call`.

use serde_json::json;

use crate::{Home, json, run};

#[test]
fn tools_list_json_shows_the_memory_tools_with_source_and_schema() {
    let home = Home::new();
    let (code, stdout, stderr) = run(home.omniagent(&["--json", "tools", "list"]));
    assert_eq!(code, 0, "{stderr}");
    let listing = json(&stdout);
    assert_eq!(listing["skipped"], json!([]));
    let tools = listing["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["memory__forget", "memory__list", "memory__recall", "memory__remember", "skills__activate", "skills__read"],
        "the memory tools, and the markdown skills' (of the built-in pack)"
    );
    let remember = &tools[3];
    assert_eq!(remember["source"], json!({"kind": "skill", "skill": "memory", "tool": "remember"}));
    assert_eq!(remember["input_schema"]["required"], json!(["key", "value"]));
    assert!(remember["description"].as_str().unwrap().starts_with("Store a note"));
    assert!(!home.path().join("state").exists(), "listing tools touches no state");
}

#[test]
fn tools_list_reads_well_in_80_columns_without_colour_off_a_terminal() {
    let (code, stdout, _) = run(Home::new().omniagent(&["tools", "list"]));
    assert_eq!(code, 0);
    assert!(stdout.starts_with("memory (skill)\n  memory__forget    Delete the note stored under a key\n"), "{stdout}");
    assert!(stdout.ends_with("\n6 tools from 2 skills\n"), "{stdout}");
    for line in stdout.lines() {
        assert!(line.chars().count() <= 80, "longer than 80 columns: {line:?}");
    }
    assert!(!stdout.contains('\x1b'), "no colour when stdout is not a terminal");
}

#[test]
fn remembered_values_are_recalled_by_a_new_process() {
    let home = Home::new();
    let (code, stdout, _) =
        run(home.omniagent(&["tools", "call", "memory__remember", "--args", r#"{"key":"a","value":"1"}"#]));
    assert_eq!((code, stdout.as_str()), (0, "remembered `a`\n"));
    assert!(home.path().join("state/omniagent.db").is_file());

    let (code, stdout, _) = run(home.omniagent(&["tools", "call", "memory__recall", "--args", r#"{"key":"a"}"#]));
    assert_eq!((code, stdout.as_str()), (0, "1\n"));

    let (code, stdout, _) = run(home.omniagent(&["--json", "tools", "call", "recall", "--args", r#"{"key":"a"}"#]));
    assert_eq!(code, 0);
    assert_eq!(
        json(&stdout),
        json!({"content": [{"type": "text", "text": "1"}], "structuredContent": {"key": "a", "value": "1"}, "isError": false})
    );
}

#[test]
fn a_tool_reported_error_exits_1_with_the_result() {
    let home = Home::new();
    let (code, stdout, stderr) =
        run(home.omniagent(&["tools", "call", "memory__recall", "--args", r#"{"key":"nope"}"#]));
    assert_eq!((code, stdout.as_str(), stderr.as_str()), (1, "", "tool error: nothing is remembered under `nope`\n"));

    let (code, stdout, _) =
        run(home.omniagent(&["--json", "tools", "call", "memory__recall", "--args", r#"{"key":"nope"}"#]));
    assert_eq!(code, 1);
    assert_eq!(json(&stdout)["isError"], json!(true));
}

#[test]
fn arguments_come_from_a_file_or_stdin() {
    let home = Home::new();
    let file = home.write("args.json", r#"{"key": "from-file", "value": "f"}"#);
    let (code, _, stderr) =
        run(home.omniagent(&["tools", "call", "memory__remember", "--args", &format!("@{}", file.display())]));
    assert_eq!(code, 0, "{stderr}");

    let mut command = home.omniagent(&["tools", "call", "memory__remember", "--args", "-"]);
    command.write_stdin(r#"{"key": "from-stdin", "value": "s"}"#);
    assert_eq!(run(command).0, 0);

    let (code, stdout, _) = run(home.omniagent(&["tools", "call", "memory__list"]));
    assert_eq!((code, stdout.as_str()), (0, "from-file\nfrom-stdin\n"));
}

#[test]
fn an_unknown_tool_exits_2_and_suggests_close_names() {
    let (code, stdout, stderr) = run(Home::new().omniagent(&["tools", "call", "memory__remembr"]));
    assert_eq!(code, 2);
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        "error: unknown tool `memory__remembr`; did you mean `memory__remember`, `memory__forget` or `memory__recall`?\n\
         hint: `omniagent tools list` shows every tool\n"
    );
}

#[test]
fn arguments_failing_the_schema_exit_2_naming_the_field() {
    let home = Home::new();
    let check = |args: &str, expect: &str| {
        let (code, _, stderr) = run(home.omniagent(&["tools", "call", "memory__remember", "--args", args]));
        assert_eq!((code, stderr.as_str()), (2, expect), "{args}");
    };
    check(
        r#"{"key":"a"}"#,
        "error: invalid arguments for `memory__remember`: arguments: \"value\" is a required property\n",
    );
    check(
        r#"{"key":"a","value":7}"#,
        "error: invalid arguments for `memory__remember`: /value: 7 is not of type \"string\"\n",
    );
    check(
        r#"{"key":"a","value":"v","extra":1}"#,
        "error: invalid arguments for `memory__remember`: arguments: Additional properties are not allowed ('extra' was unexpected)\n",
    );
    check(r#"{"key":"#, "error: --args is not valid JSON: EOF while parsing a value at line 1 column 7\n");
    check("[1]", "error: --args must be a JSON object of arguments, not an array\n");
}

#[test]
fn memory_can_be_turned_off() {
    let home = Home::new().with_config("compiled:\n  memory:\n    enabled: false\nskills:\n  tools: false\n");
    let (code, stdout, _) = run(home.omniagent(&["--json", "tools", "list"]));
    assert_eq!(code, 0);
    let nothing_left_out = json!({"left_out": 0, "unmatched_include": [], "unmatched_exclude": []});
    assert_eq!(
        json(&stdout),
        json!({"tools": [], "withheld": [], "skipped": [], "skipped_tools": [], "left_out_keywords": [], "tool_filter": nothing_left_out})
    );
    let (code, _, stderr) = run(home.omniagent(&["tools", "call", "memory__recall", "--args", r#"{"key":"a"}"#]));
    assert_eq!(code, 2, "{stderr}");
}

#[test]
fn completions_are_generated_for_each_shell() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let (code, stdout, stderr) = run(Home::new().omniagent(&["completions", shell]));
        assert_eq!(code, 0, "{shell}: {stderr}");
        assert!(stdout.contains("omniagent"), "{shell}");
    }
}

/// Colour on a terminal (a pseudo-terminal from util-linux's `script`), and none there
/// either when `NO_COLOR` is set.
#[test]
fn colour_only_on_a_terminal_and_never_with_no_color() {
    let home = Home::new();
    let on_terminal = |no_color: bool| {
        let mut script = std::process::Command::new("script");
        let shell_command = format!("{} tools list", env!("CARGO_BIN_EXE_omniagent"));
        script
            .args(["-qec", &shell_command, "/dev/null"])
            .env_clear()
            .env("OMNIAGENT_HOME", home.path())
            .env("TERM", "xterm");
        if no_color {
            script.env("NO_COLOR", "1");
        }
        let output = script.output().expect("util-linux `script` runs");
        String::from_utf8(output.stdout).expect("UTF-8 output")
    };
    let coloured = on_terminal(false);
    assert!(coloured.contains("\x1b[1mmemory\x1b[0m"), "{coloured:?}");
    let plain = on_terminal(true);
    assert!(plain.contains("memory (skill)") && !plain.contains('\x1b'), "{plain:?}");
}

#[test]
fn the_tools_section_chooses_the_tools_each_agent_offers() {
    let home = Home::new().with_config(
        "storage: {backend: memory}\ntools:\n  exclude: [memory__forget, \"skills__*\"]\nagents:\n  reader:\n    tools: {include: [\"*__recall\", \"*__list\"]}\n",
    );
    let names = |agent: &[&str]| {
        let mut args = agent.to_vec();
        args.extend(["--json", "tools", "list"]);
        let (code, stdout, stderr) = run(home.omniagent(&args));
        assert_eq!(code, 0, "{stderr}");
        let listing = json(&stdout);
        let tools = listing["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap().to_owned());
        tools.collect::<Vec<_>>()
    };
    assert_eq!(names(&[]), ["memory__list", "memory__recall", "memory__remember"]);
    assert_eq!(
        names(&["--agent", "reader"]),
        ["memory__list", "memory__recall"],
        "the top level's exclude still holds"
    );

    let (code, _, stderr) = run(home.omniagent(&[
        "--agent",
        "reader",
        "tools",
        "call",
        "memory__remember",
        "--args",
        r#"{"key":"k","value":"v"}"#,
    ]));
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        "error: `memory__remember` is left out by the config's `tools:` section (its include and exclude)\n"
    );

    // What the filter left out is counted, and a pattern that matches nothing is named.
    home.write("config.yaml", "storage: {backend: memory}\ntools:\n  include: [\"memory__*\", \"memroy__*\"]\n");
    let (code, stdout, stderr) = run(home.omniagent(&["tools", "list"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("4 tools from 1 skill (2 more left out by the config's `tools:` section)\n"), "{stdout}");
    assert!(stdout.contains("`tools:` include pattern `memroy__*` matches no tool\n"), "{stdout}");
    let (_, stdout, _) = run(home.omniagent(&["--json", "tools", "list"]));
    assert_eq!(
        json(&stdout)["tool_filter"],
        serde_json::json!({"left_out": 2, "unmatched_include": ["memroy__*"], "unmatched_exclude": []})
    );
    // The gateway says so in its log, where a host's user finds it.
    let (code, _, stderr) = run(home.omniagent(&["mcp", "serve", "--eager"]));
    assert!(stderr.contains("`tools:` include pattern `memroy__*` matches no tool\n"), "{stderr}");
    // Its input closed before `initialize`, as a host checking the command closes it: no failure.
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("error"), "{stderr}");

    home.write("config.yaml", "tools:\n  include: [github.get_repo]\n");
    let (code, _, stderr) = run(home.omniagent(&["tools", "list"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("config.yaml:2:12: tools.include: `github.get_repo` can never match a tool"), "{stderr}");
}

/// `tools search` over GitHub's 1,223 OpenAPI tools finds the tool for a task first, as
/// the gateway's `search_tools` does, in 80 columns or as JSON.
#[test]
fn tools_search_finds_the_tool_for_a_task_among_githubs() {
    let home = Home::new().with_config(&format!(
        "openapi:\n  github: {{spec: '{}', base_url: 'http://127.0.0.1:9'}}\n",
        test_peers::github_openapi_or_panic().display()
    ));
    let (code, stdout, stderr) =
        run(home.omniagent(&["-q", "tools", "search", "add a label to an issue", "--limit", "3"]));
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    let first: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(first, ["github__issues_add-labels", "Add", "labels", "to", "an", "issue"], "{stdout}");
    assert_eq!((lines.len(), lines[3]), (5, ""), "{stdout}");
    assert!(lines[4].starts_with("3 of ") && lines[4].contains("(--limit for the other"), "{stdout}");
    assert!(lines.iter().all(|line| line.chars().count() <= 80), "{stdout}");

    let (code, stdout, stderr) = run(home.omniagent(&["-q", "--json", "tools", "search", "merge a pull request"]));
    assert_eq!(code, 0, "{stderr}");
    let found = json(&stdout);
    assert_eq!(found["query"], json!("merge a pull request"));
    assert_eq!(found["tools"][0]["name"], json!("github__pulls_merge"), "{found}");
    assert_eq!(found["tools"][0]["source"], json!({"kind": "openapi", "skill": "github", "tool": "pulls_merge"}));
    assert_eq!(found["tools"].as_array().unwrap().len(), 10, "ten by default");
    assert!(found["matched"].as_u64().unwrap() > 10, "{}", found["matched"]);
}

#[test]
fn tools_search_says_when_nothing_matches_and_refuses_a_limit_of_0() {
    let home = Home::new();
    let (code, stdout, stderr) = run(home.omniagent(&["tools", "search", "zebra"]));
    assert_eq!((code, stdout.as_str()), (0, "no tool matches `zebra`\n"), "{stderr}");
    let (code, _, stderr) = run(home.omniagent(&["tools", "search", "note", "--limit", "0"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--limit"), "{stderr}");
}
