//! `--elicitation`: how an MCP server's request for input is answered outside the
//! gateway. On a terminal the person is asked on stderr, field by field; otherwise the
//! request is declined, or with `defaults` accepted with the schema's defaults.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value};
use skill_mcp::{AcceptDefaults, Elicitation as Request, ElicitationAnswer, ElicitationMode, Elicitor};

use crate::args::Elicitation;

/// The elicitor `--elicitation` asks for; without the flag, the terminal when stdin and
/// stderr are one, else none (every request declined).
pub(super) fn elicitor(chosen: Option<Elicitation>) -> Option<Arc<dyn Elicitor>> {
    let on_terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    match chosen {
        Some(Elicitation::Ask) => Some(Arc::new(Terminal)),
        None if on_terminal => Some(Arc::new(Terminal)),
        Some(Elicitation::Defaults) => Some(Arc::new(AcceptDefaults)),
        Some(Elicitation::Decline) | None => None,
    }
}

/// Asks the person on stderr and reads the answers from stdin.
struct Terminal;

#[async_trait]
impl Elicitor for Terminal {
    async fn elicit(&self, request: Request) -> ElicitationAnswer {
        // Reading stdin blocks; a closed stdin declines.
        tokio::task::spawn_blocking(move || {
            let mut input = std::io::stdin().lock();
            ask(&request, &mut input, &mut std::io::stderr()).unwrap_or(ElicitationAnswer::Decline)
        })
        .await
        .unwrap_or(ElicitationAnswer::Decline)
    }
}

/// Asks `request` of the person: whether they answer, then each field in the schema's
/// order. `None` when the input ends.
fn ask(request: &Request, input: &mut dyn BufRead, output: &mut dyn Write) -> Option<ElicitationAnswer> {
    let _ = writeln!(output, "MCP server `{}` asks: {}", request.server, request.message);
    match &request.mode {
        ElicitationMode::Url { url } => {
            let _ = writeln!(output, "Open {url}");
            match line(input, output, "Done? [Y]es, [n]o (decline), [c]ancel: ")?.as_str() {
                "" | "y" | "yes" => Some(ElicitationAnswer::Accept(Map::new())),
                "c" | "cancel" => Some(ElicitationAnswer::Cancel),
                _ => Some(ElicitationAnswer::Decline),
            }
        }
        ElicitationMode::Form { schema } => {
            match line(input, output, "Answer? [Y]es, [n]o (decline), [c]ancel: ")?.as_str() {
                "" | "y" | "yes" => {}
                "c" | "cancel" => return Some(ElicitationAnswer::Cancel),
                _ => return Some(ElicitationAnswer::Decline),
            }
            let required: Vec<&str> =
                schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            let mut content = Map::new();
            for (name, field) in schema["properties"].as_object().into_iter().flatten() {
                let value = field_value(name, field, required.contains(&name.as_str()), input, output)?;
                if let Some(value) = value {
                    content.insert(name.clone(), value);
                }
            }
            Some(ElicitationAnswer::Accept(content))
        }
    }
}

/// Asks for the field `name` until the answer fits its type: empty takes the default,
/// or leaves an optional field out.
fn field_value(
    name: &str,
    field: &Value,
    required: bool,
    input: &mut dyn BufRead,
    output: &mut dyn Write,
) -> Option<Option<Value>> {
    let kind = field["type"].as_str().unwrap_or("string");
    let choices: Vec<&str> = field["enum"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    let mut prompt = format!("  {name}");
    if let Some(about) = field["description"].as_str().or(field["title"].as_str()) {
        prompt.push_str(&format!(" ({about})"));
    }
    if !choices.is_empty() {
        prompt.push_str(&format!(" [{}]", choices.join("|")));
    } else if kind != "string" {
        prompt.push_str(&format!(" [{kind}]"));
    }
    if let Some(default) = field.get("default") {
        prompt.push_str(&format!(" (default {default})"));
    } else if !required {
        prompt.push_str(" (optional)");
    }
    prompt.push_str(": ");
    loop {
        let text = line(input, output, &prompt)?;
        if text.is_empty() {
            match field.get("default") {
                Some(default) => return Some(Some(default.clone())),
                None if !required => return Some(None),
                None => {
                    let _ = writeln!(output, "  {name} is required");
                    continue;
                }
            }
        }
        match parse(&text, kind, &choices) {
            Ok(value) => return Some(Some(value)),
            Err(problem) => {
                let _ = writeln!(output, "  {problem}");
            }
        }
    }
}

/// `text` as a value of the JSON type `kind`, one of `choices` when there are some.
fn parse(text: &str, kind: &str, choices: &[&str]) -> Result<Value, String> {
    if !choices.is_empty() && !choices.contains(&text) {
        return Err(format!("answer one of {}", choices.join(", ")));
    }
    match kind {
        "integer" => text.parse::<i64>().map(Value::from).map_err(|_| "answer a whole number".to_owned()),
        "number" => text
            .parse::<f64>()
            .ok()
            .and_then(|number| serde_json::Number::from_f64(number).map(Value::Number))
            .ok_or_else(|| "answer a number".to_owned()),
        "boolean" => match text.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Ok(Value::Bool(true)),
            "n" | "no" | "false" => Ok(Value::Bool(false)),
            _ => Err("answer yes or no".to_owned()),
        },
        _ => Ok(Value::String(text.to_owned())),
    }
}

/// One answer, trimmed; `None` at the end of input.
fn line(input: &mut dyn BufRead, output: &mut dyn Write, prompt: &str) -> Option<String> {
    let _ = write!(output, "{prompt}");
    let _ = output.flush();
    let mut text = String::new();
    match input.read_line(&mut text) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(text.trim().to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn form() -> Request {
        Request {
            server: "forms".to_owned(),
            message: "Who are you?".to_owned(),
            mode: ElicitationMode::Form {
                schema: json!({
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "Your name"},
                        "age": {"type": "integer", "default": 30},
                        "plan": {"type": "string", "enum": ["free", "pro"]},
                        "newsletter": {"type": "boolean"},
                    },
                    "required": ["name", "plan"],
                }),
            },
        }
    }

    fn answered(request: &Request, typed: &str) -> (Option<ElicitationAnswer>, String) {
        let mut output = Vec::new();
        let answer = ask(request, &mut typed.as_bytes(), &mut output);
        (answer, String::from_utf8(output).unwrap())
    }

    #[test]
    fn each_field_is_asked_until_it_fits_and_empty_takes_the_default() {
        let (answer, shown) = answered(&form(), "\n\nAda\n\nbasic\npro\nmaybe\nyes\n");
        let expected = json!({"name": "Ada", "age": 30, "plan": "pro", "newsletter": true});
        assert_eq!(answer, Some(ElicitationAnswer::Accept(expected.as_object().unwrap().clone())));
        assert!(shown.starts_with("MCP server `forms` asks: Who are you?\n"), "{shown}");
        for said in ["  name (Your name): ", "  name is required", "  age [integer] (default 30): "] {
            assert!(shown.contains(said), "{said:?} in {shown}");
        }
        assert!(shown.contains("answer one of free, pro") && shown.contains("answer yes or no"), "{shown}");
    }

    #[test]
    fn no_declines_c_cancels_and_the_end_of_input_gives_up() {
        assert_eq!(answered(&form(), "n\n").0, Some(ElicitationAnswer::Decline));
        assert_eq!(answered(&form(), "c\n").0, Some(ElicitationAnswer::Cancel));
        assert_eq!(answered(&form(), "y\nAda\n").0, None);
        let url = Request { mode: ElicitationMode::Url { url: "https://example.com/connect".to_owned() }, ..form() };
        let (answer, shown) = answered(&url, "\n");
        assert_eq!(answer, Some(ElicitationAnswer::Accept(Map::new())));
        assert!(shown.contains("Open https://example.com/connect"), "{shown}");
    }
}
