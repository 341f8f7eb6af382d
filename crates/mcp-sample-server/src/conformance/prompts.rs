//! The fixture prompts.

use rmcp::{
    ErrorData as McpError,
    model::{
        ContentBlock, GetPromptRequestParams, GetPromptResponse, GetPromptResult, MetaObject, Prompt, PromptArgument,
        PromptMessage, ResourceContents, Role,
    },
};
use serde_json::Value;

use crate::conformance::{client_requests, resources::PNG_BASE64};

const SIMPLE: &str = "test_simple_prompt";
const WITH_ARGUMENTS: &str = "test_prompt_with_arguments";
const WITH_EMBEDDED_RESOURCE: &str = "test_prompt_with_embedded_resource";
const WITH_IMAGE: &str = "test_prompt_with_image";
/// Asks the client for a context first (protocol 2026-07-28 only).
const INPUT_REQUIRED: &str = "test_input_required_result_prompt";
/// The `inputRequests` key of [`INPUT_REQUIRED`].
const CONTEXT_KEY: &str = "user_context";

pub(super) fn list() -> Vec<Prompt> {
    let argument =
        |name: &str, description: &str| PromptArgument::new(name).with_description(description).with_required(true);
    vec![
        Prompt::new(SIMPLE, Some("A simple prompt without arguments"), None)
            .with_title("Simple Test Prompt")
            .with_icons(crate::icons::item())
            .with_meta(MetaObject([("com.example/fixture".to_owned(), Value::from("simple"))].into_iter().collect())),
        Prompt::new(
            WITH_ARGUMENTS,
            Some("A prompt with required arguments"),
            Some(vec![argument("arg1", "First test argument"), argument("arg2", "Second test argument")]),
        )
        .with_title("Prompt With Arguments"),
        Prompt::new(
            WITH_EMBEDDED_RESOURCE,
            Some("A prompt that includes an embedded resource"),
            Some(vec![argument("resourceUri", "URI of the resource to embed")]),
        )
        .with_title("Prompt With Embedded Resource"),
        Prompt::new(WITH_IMAGE, Some("A prompt that includes image content"), None).with_title("Prompt With Image"),
        Prompt::new(
            INPUT_REQUIRED,
            Some("A prompt that first asks the client for a context (an InputRequiredResult, protocol 2026-07-28)"),
            None,
        )
        .with_title("Prompt Requiring Input"),
    ]
}

pub(super) fn get(request: &GetPromptRequestParams) -> Result<GetPromptResponse, McpError> {
    let user = |content: ContentBlock| PromptMessage::new(Role::User, content);
    let messages = match request.name.as_str() {
        SIMPLE => vec![PromptMessage::new_text(Role::User, "This is a simple prompt for testing.")],
        WITH_ARGUMENTS => {
            let arg1 = required_argument(request, "arg1")?;
            let arg2 = required_argument(request, "arg2")?;
            vec![PromptMessage::new_text(Role::User, format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"))]
        }
        WITH_EMBEDDED_RESOURCE => {
            let uri = required_argument(request, "resourceUri")?;
            vec![
                user(ContentBlock::resource(ResourceContents::text("Embedded resource content for testing.", uri))),
                PromptMessage::new_text(Role::User, "Please process the embedded resource above."),
            ]
        }
        WITH_IMAGE => vec![
            user(ContentBlock::image(PNG_BASE64, "image/png")),
            PromptMessage::new_text(Role::User, "Please analyze the image above."),
        ],
        INPUT_REQUIRED => {
            let answer = request.input_responses.as_ref().and_then(|responses| responses.get(CONTEXT_KEY));
            let Some(answer) = answer else {
                let ask = client_requests::elicitation("What context should the prompt use?", "context", "string")?;
                return Ok(client_requests::input_required([(CONTEXT_KEY, ask)], None).into());
            };
            let context = client_requests::accepted_field(answer, "context").ok_or_else(|| {
                McpError::invalid_params(
                    format!("inputResponses.{CONTEXT_KEY} is not an accepted elicitation result with a `context`"),
                    None,
                )
            })?;
            vec![PromptMessage::new_text(Role::User, format!("Answer with this context in mind: {context}"))]
        }
        name => return Err(McpError::invalid_params(format!("prompt not found: {name}"), None)),
    };
    Ok(GetPromptResult::new(messages).into())
}

fn required_argument<'a>(request: &'a GetPromptRequestParams, name: &str) -> Result<&'a str, McpError> {
    request.arguments.as_ref().and_then(|arguments| arguments.get(name)).and_then(Value::as_str).ok_or_else(|| {
        McpError::invalid_params(format!("prompt {} needs the string argument `{name}`", request.name), None)
    })
}
