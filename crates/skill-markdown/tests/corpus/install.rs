//! Install specs: every kind, named with `kind` or `type`, and those that cannot be used.

use super::*;

/// The seven install specs of `install-kind` and `install-type`, in their order.
fn every_install_kind(download_url: &str, download_os: &[&str]) -> Vec<InstallSpec> {
    vec![
        InstallSpec { formula: some("jq"), ..spec(InstallKind::Brew) },
        InstallSpec { package: some("@scope/tool"), ..spec(InstallKind::Node) },
        InstallSpec { module: some("example.com/cmd/gotool@v1.2.0"), ..spec(InstallKind::Go) },
        InstallSpec { package: some("ruff"), ..spec(InstallKind::Uv) },
        InstallSpec { url: some(download_url), os: strings(download_os), ..spec(InstallKind::Download) },
        InstallSpec { package: some("jq"), ..spec(InstallKind::Apt) },
        InstallSpec { package: some("prettier"), ..spec(InstallKind::Npm) },
    ]
}

#[test]
fn install_specs_named_with_kind() {
    let mut install = every_install_kind("https://example.com/tool.tar.gz", &["darwin", "linux"]);
    install[0].id = some("brew");
    install[0].label = some("Install jq (brew)");
    let bins_of = [&["jq"][..], &["tool"], &["gotool"], &["ruff"], &[], &["jq"], &["prettier"]];
    for (spec, bins) in install.iter_mut().zip(bins_of) {
        spec.bins = strings(bins);
    }
    check(
        "install-kind",
        MarkdownSkill { install, ..expected("install-kind", "One install spec per kind, named with `kind`.", BODY) },
    );
}

#[test]
fn install_specs_named_with_type_in_any_case() {
    let mut install = every_install_kind("https://example.com/tool.zip", &["win32"]);
    install[2].module = some("example.com/cmd/gotool");
    check(
        "install-type",
        MarkdownSkill {
            install,
            ..expected("install-type", "One install spec per kind, named with `type`, in any case.", BODY)
        },
    );
}

#[test]
fn unusable_install_specs_are_dropped_with_a_warning_and_the_skill_kept() {
    check(
        "install-unknown",
        MarkdownSkill {
            requires: bins(&["fd"]),
            install: vec![InstallSpec { bins: strings(&["fd"]), formula: some("fd"), ..spec(InstallKind::Brew) }],
            warnings: strings(&["install spec 1: unknown kind `pip`; dropped", "install spec 2: no `kind`; dropped"]),
            ..expected("install-unknown", "Install specs that cannot be used are dropped; the skill stays.", BODY)
        },
    );
}
