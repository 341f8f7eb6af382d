//! `completion/complete` for the fixture prompts' arguments and the template's `{id}`.

use rmcp::model::{CompleteRequestParams, CompletionInfo, Reference};

/// The values that complete the argument, those starting with what the client typed.
pub(super) fn complete(request: &CompleteRequestParams) -> CompletionInfo {
    let candidates: &[&str] = match (&request.r#ref, request.argument.name.as_str()) {
        (Reference::Prompt(prompt), "arg1") if prompt.name == "test_prompt_with_arguments" => &["testValue1"],
        (Reference::Prompt(prompt), "arg2") if prompt.name == "test_prompt_with_arguments" => &["testValue2"],
        (Reference::Prompt(prompt), "resourceUri") if prompt.name == "test_prompt_with_embedded_resource" => {
            &["test://static-text", "test://static-binary", "test://watched-resource"]
        }
        (Reference::Resource(template), "id") if template.uri == "test://template/{id}/data" => &["123", "456"],
        _ => &[],
    };
    let values: Vec<String> = candidates
        .iter()
        .filter(|candidate| candidate.starts_with(&request.argument.value))
        .map(|&candidate| candidate.to_owned())
        .collect();
    let total = u32::try_from(values.len()).unwrap_or(u32::MAX);
    let mut completion = CompletionInfo::default();
    completion.values = values;
    completion.total = Some(total);
    completion.has_more = Some(false);
    completion
}

#[cfg(test)]
mod tests {
    use rmcp::model::ArgumentInfo;

    use super::*;

    fn check(reference: Reference, argument: &str, typed: &str, expected: &[&str]) {
        let request = CompleteRequestParams::new(reference, ArgumentInfo::new(argument, typed));
        assert_eq!(complete(&request).values, expected, "{argument} = {typed:?}");
    }

    #[test]
    fn completes_by_prefix() {
        check(Reference::for_prompt("test_prompt_with_arguments"), "arg1", "test", &["testValue1"]);
        check(Reference::for_prompt("test_prompt_with_arguments"), "arg2", "", &["testValue2"]);
        check(Reference::for_prompt("test_prompt_with_arguments"), "arg1", "x", &[]);
        check(
            Reference::for_prompt("test_prompt_with_embedded_resource"),
            "resourceUri",
            "test://static-b",
            &["test://static-binary"],
        );
        check(Reference::for_resource("test://template/{id}/data"), "id", "1", &["123"]);
        check(Reference::for_prompt("test_simple_prompt"), "arg1", "", &[]);
    }
}
