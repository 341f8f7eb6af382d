//! Safe extraction of `.tar.gz` and `.zip` archives into a staging folder: every entry's
//! path is checked (relative, no `..`), links of any kind are refused outright (what a
//! skill needs is files and folders, and a link is how an archive writes outside), as are
//! devices and FIFOs, and the caps hold on what entries declare and on what they really
//! expand to.

use std::cell::Cell;
use std::fs;
use std::io::{BufReader, Read};
use std::path::Path;
use std::rc::Rc;

use super::error::{EntryProblem, InstallError};
use super::tree::{Budget, entry_path};

/// Extracts the gzip-compressed tar archive `archive` into the folder `into`.
pub(crate) fn extract_tar_gz(archive: &Path, into: &Path, budget: &mut Budget<'_>) -> Result<(), InstallError> {
    let source_text = budget.what().to_owned();
    let file = fs::File::open(archive).map_err(|error| InstallError::Io { path: archive.to_owned(), error })?;
    let gzip = flate2::read::GzDecoder::new(BufReader::new(file));
    // Content, plus a header block and a padding block per entry, plus the end blocks.
    let limits = budget.limits();
    let cap = limits.max_bytes + 1024 * (limits.max_entries + 2);
    let hit = Rc::new(Cell::new(false));
    let mut tar = tar::Archive::new(CappedReader { inner: gzip, left: cap, hit: Rc::clone(&hit) });
    let result = extract_tar_entries(&mut tar, &source_text, into, budget);
    if hit.get() {
        return Err(InstallError::TooLarge { source_text, cap: limits.max_bytes });
    }
    result
}

fn extract_tar_entries(
    tar: &mut tar::Archive<impl Read>,
    source_text: &str,
    into: &Path,
    budget: &mut Budget<'_>,
) -> Result<(), InstallError> {
    let read_error =
        |error: std::io::Error| InstallError::Read { source_text: source_text.to_owned(), message: error.to_string() };
    for entry in tar.entries().map_err(read_error)? {
        let mut entry = entry.map_err(read_error)?;
        let name = entry.path().map_err(read_error)?.into_owned();
        let unsafe_entry = |problem| InstallError::UnsafeEntry {
            source_text: source_text.to_owned(),
            entry: name.display().to_string(),
            problem,
        };
        let kind = entry.header().entry_type();
        let problem = match kind {
            tar::EntryType::Regular | tar::EntryType::Continuous | tar::EntryType::Directory => None,
            tar::EntryType::XGlobalHeader => continue,
            tar::EntryType::Symlink | tar::EntryType::Link => Some(EntryProblem::Link),
            _ => Some(EntryProblem::Special),
        };
        if let Some(problem) = problem {
            return Err(unsafe_entry(problem));
        }
        let Some(relative) = entry_path(&name).map_err(unsafe_entry)? else { continue };
        let target = into.join(&relative);
        budget.entry()?;
        if kind == tar::EntryType::Directory {
            fs::create_dir_all(&target).map_err(|error| InstallError::Io { path: target, error })?;
            continue;
        }
        budget.declare(entry.size())?;
        let executable = entry.header().mode().is_ok_and(|mode| mode & 0o111 != 0);
        create_parent(&target)?;
        budget.write_file(&mut entry, &target, executable).map_err(|error| duplicate_as(error, unsafe_entry))?;
    }
    Ok(())
}

/// Extracts the zip archive `archive` into the folder `into`. What the entries declare is
/// added up first, so a bomb is refused before anything is written.
pub(crate) fn extract_zip(archive: &Path, into: &Path, budget: &mut Budget<'_>) -> Result<(), InstallError> {
    let source_text = budget.what().to_owned();
    let read_error = |error: zip::result::ZipError| InstallError::Read {
        source_text: source_text.clone(),
        message: error.to_string(),
    };
    let file = fs::File::open(archive).map_err(|error| InstallError::Io { path: archive.to_owned(), error })?;
    let mut zip = zip::ZipArchive::new(BufReader::new(file)).map_err(read_error)?;
    let mut declared = 0_u64;
    for index in 0..zip.len() {
        let entry = zip.by_index_raw(index).map_err(read_error)?;
        declared = declared.saturating_add(entry.size());
        budget.declare(declared)?;
    }
    for index in 0..zip.len() {
        let name = zip.by_index_raw(index).map_err(read_error)?.name().map_err(read_error)?.replace('\\', "/");
        let unsafe_entry =
            |problem| InstallError::UnsafeEntry { source_text: source_text.clone(), entry: name.clone(), problem };
        let mut entry = match zip.by_index(index) {
            Ok(entry) => entry,
            Err(zip::result::ZipError::UnsupportedArchive(_)) => return Err(unsafe_entry(EntryProblem::Unsupported)),
            Err(error) => return Err(read_error(error)),
        };
        if entry.is_symlink() {
            return Err(unsafe_entry(EntryProblem::Link));
        }
        let is_dir = entry.is_dir();
        let mode = entry.unix_mode();
        if !is_dir && mode.is_some_and(|mode| mode & 0o170000 != 0 && mode & 0o170000 != 0o100000) {
            return Err(unsafe_entry(EntryProblem::Special));
        }
        let Some(relative) = entry_path(Path::new(&name)).map_err(unsafe_entry)? else { continue };
        let target = into.join(&relative);
        budget.entry()?;
        if is_dir {
            fs::create_dir_all(&target).map_err(|error| InstallError::Io { path: target, error })?;
            continue;
        }
        let executable = mode.is_some_and(|mode| mode & 0o111 != 0);
        create_parent(&target)?;
        budget.write_file(&mut entry, &target, executable).map_err(|error| duplicate_as(error, unsafe_entry))?;
    }
    Ok(())
}

fn create_parent(target: &Path) -> Result<(), InstallError> {
    match target.parent() {
        Some(parent) => fs::create_dir_all(parent).map_err(|error| InstallError::Io { path: parent.to_owned(), error }),
        None => Ok(()),
    }
}

/// A reader that stops with an error past `cap` bytes, and remembers that it did: what a
/// tar stream expands to is bounded too, not only what its entries declare (headers and
/// extensions are read before any entry is written).
struct CappedReader<R> {
    inner: R,
    left: u64,
    hit: Rc<Cell<bool>>,
}

impl<R: Read> Read for CappedReader<R> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            self.hit.set(true);
            return Err(std::io::Error::other("the archive expands past its cap"));
        }
        let room = buffer.len().min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n_read = self.inner.read(&mut buffer[..room])?;
        self.left -= n_read as u64;
        Ok(n_read)
    }
}

/// A file that exists already, because the archive named it before, is a duplicate entry.
fn duplicate_as(error: InstallError, unsafe_entry: impl Fn(EntryProblem) -> InstallError) -> InstallError {
    match error {
        InstallError::Io { error, .. } if error.kind() == std::io::ErrorKind::AlreadyExists => {
            unsafe_entry(EntryProblem::Duplicate)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;
    use crate::install::tree::{Limits, digests};

    /// A tar.gz of `(name, content)` entries, names written as they are (no checks).
    fn tar_gz(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast()));
        for (name, content) in entries {
            let mut header = tar::Header::new_old();
            header.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
            header.set_size(content.len() as u64);
            header.set_mode(0o644);
            header.set_entry_type(tar::EntryType::Regular);
            header.set_cksum();
            builder.append(&header, *content).unwrap();
        }
        builder.into_inner().unwrap().finish().unwrap()
    }

    fn extract(bytes: &[u8], file_name: &str, limits: Limits) -> Result<Vec<String>, InstallError> {
        let folder = tempfile::tempdir().unwrap();
        let archive = folder.path().join(file_name);
        fs::write(&archive, bytes).unwrap();
        let into = folder.path().join("content");
        fs::create_dir(&into).unwrap();
        let mut budget = Budget::new(limits, "the archive");
        if file_name.ends_with(".zip") {
            extract_zip(&archive, &into, &mut budget)?;
        } else {
            extract_tar_gz(&archive, &into, &mut budget)?;
        }
        Ok(digests(&into).unwrap().into_keys().collect())
    }

    fn problem(result: Result<Vec<String>, InstallError>) -> EntryProblem {
        match result {
            Err(InstallError::UnsafeEntry { problem, .. }) => problem,
            other => panic!("not an unsafe entry: {other:?}"),
        }
    }

    #[test]
    fn a_tar_gz_extracts_and_its_hostile_entries_are_refused() {
        let good = tar_gz(&[("hello/SKILL.md", b"hi"), ("hello/docs/a.md", b"a")]);
        assert_eq!(extract(&good, "a.tar.gz", Limits::DEFAULT).unwrap(), ["hello/SKILL.md", "hello/docs/a.md"]);

        assert_eq!(
            problem(extract(&tar_gz(&[("../evil", b"x")]), "a.tar.gz", Limits::DEFAULT)),
            EntryProblem::ParentDir
        );
        assert_eq!(
            problem(extract(&tar_gz(&[("/tmp/evil", b"x")]), "a.tar.gz", Limits::DEFAULT)),
            EntryProblem::Absolute
        );
        assert_eq!(
            problem(extract(&tar_gz(&[("a", b"x"), ("a", b"y")]), "a.tar.gz", Limits::DEFAULT)),
            EntryProblem::Duplicate
        );

        let many = tar_gz(&[("a", b""), ("b", b""), ("c", b"")]);
        let refused = extract(&many, "a.tar.gz", Limits { max_bytes: 100, max_entries: 2 }).unwrap_err();
        assert_eq!(refused.to_string(), "the archive: the skill has more than the cap of 2 files and folders");
        let big = tar_gz(&[("a", &[0; 1000])]);
        let refused = extract(&big, "a.tar.gz", Limits { max_bytes: 999, max_entries: 10 }).unwrap_err();
        assert_eq!(refused.to_string(), "the archive: the skill is larger than the cap of 999 bytes");
    }

    #[test]
    fn what_a_tar_stream_expands_to_is_capped_too() {
        // A pax extension header is read whole before any entry: 5,000 bytes of one, past
        // 100 bytes of content plus a header and padding block per entry.
        let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast()));
        let mut header = tar::Header::new_ustar();
        header.set_entry_type(tar::EntryType::XHeader);
        header.set_size(5000);
        header.set_cksum();
        builder.append(&header, &[b'1'; 5000][..]).unwrap();
        let bytes = builder.into_inner().unwrap().finish().unwrap();
        let refused = extract(&bytes, "a.tar.gz", Limits { max_bytes: 100, max_entries: 1 }).unwrap_err();
        assert_eq!(refused.to_string(), "the archive: the skill is larger than the cap of 100 bytes");
    }

    #[test]
    fn a_zip_entry_that_expands_past_its_declared_size_is_stopped() {
        let mut bytes = zip(&[("a", &[0; 10_000])]);
        // Declare 10 bytes in the local header (offset 22) and the central directory
        // entry (offset 24), as a bomb that lies would.
        let local = 0;
        let central = bytes.windows(4).position(|window| window == b"PK\x01\x02").unwrap();
        bytes[local + 22..local + 26].copy_from_slice(&10_u32.to_le_bytes());
        bytes[central + 24..central + 28].copy_from_slice(&10_u32.to_le_bytes());
        let result = extract(&bytes, "a.zip", Limits { max_bytes: 1_000, max_entries: 10 });
        assert!(matches!(result, Err(InstallError::TooLarge { .. } | InstallError::Read { .. })), "{result:?}");
    }

    #[test]
    fn tar_links_are_refused() {
        for kind in [tar::EntryType::Symlink, tar::EntryType::Link] {
            let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast()));
            let mut header = tar::Header::new_gnu();
            header.set_entry_type(kind);
            header.set_size(0);
            builder.append_link(&mut header, "inside", "../../outside").unwrap();
            let bytes = builder.into_inner().unwrap().finish().unwrap();
            assert_eq!(problem(extract(&bytes, "a.tar.gz", Limits::DEFAULT)), EntryProblem::Link);
        }
    }

    fn zip(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        for (name, content) in entries {
            writer.start_file(*name, options).unwrap();
            writer.write_all(content).unwrap();
        }
        writer.finish().unwrap().into_inner()
    }

    #[test]
    fn a_zip_extracts_and_its_hostile_entries_are_refused() {
        let good = zip(&[("SKILL.md", b"hi"), ("scripts/run.sh", b"echo")]);
        assert_eq!(extract(&good, "a.zip", Limits::DEFAULT).unwrap(), ["SKILL.md", "scripts/run.sh"]);
        assert_eq!(problem(extract(&zip(&[("../evil", b"x")]), "a.zip", Limits::DEFAULT)), EntryProblem::ParentDir);
        assert_eq!(problem(extract(&zip(&[("..\\evil", b"x")]), "a.zip", Limits::DEFAULT)), EntryProblem::ParentDir);
        assert_eq!(problem(extract(&zip(&[("/evil", b"x")]), "a.zip", Limits::DEFAULT)), EntryProblem::Absolute);

        let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        writer.add_symlink("link", "/etc/passwd", zip::write::SimpleFileOptions::default()).unwrap();
        let link = writer.finish().unwrap().into_inner();
        assert_eq!(problem(extract(&link, "a.zip", Limits::DEFAULT)), EntryProblem::Link);

        let bomb = zip(&[("a", &[0; 10_000])]);
        assert!(bomb.len() < 200, "{} bytes", bomb.len());
        let refused = extract(&bomb, "a.zip", Limits { max_bytes: 9_999, max_entries: 10 }).unwrap_err();
        assert_eq!(refused.to_string(), "the archive: the skill is larger than the cap of 9999 bytes");
    }
}
