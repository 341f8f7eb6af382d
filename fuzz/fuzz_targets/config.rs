//! The config file: parsing never panics, and a config that parses gives every agent it
//! names, whose effective config can be shown (`config show`).
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use omniagent_host::Config;

fuzz_target!(|bytes: &[u8]| {
    let Ok(text) = std::str::from_utf8(bytes) else { return };
    let Ok(config) = Config::parse(Path::new("/home/fuzz/.omniagent/config.yaml"), text) else { return };
    let names: Vec<String> = config.agent_names().map(str::to_owned).collect();
    for name in [None].into_iter().chain(names.iter().map(|name| Some(name.as_str()))) {
        if let Ok(agent) = config.for_agent(name) {
            let shown = serde_yaml_ng::to_string(&agent).expect("an effective config serializes");
            assert!(!shown.is_empty());
            let _ = agent.secret_references();
        }
    }
});
