//! Why a file tool refused or failed, in words a model can act on.

use std::fmt;
use std::io::ErrorKind;

use toolhost_guest::ToolError;

use crate::grants::Granted;

#[derive(Debug)]
pub enum FileError {
    /// The operator granted no directory at all.
    NoGrant,
    Relative {
        path: String,
        granted: Granted,
    },
    Outside {
        path: String,
        granted: Granted,
    },
    ReadOnly {
        path: String,
        grant: String,
    },
    NotFound {
        path: String,
    },
    /// The path is a `found` where the tool needs a `wanted`.
    WrongKind {
        path: String,
        wanted: &'static str,
        found: &'static str,
    },
    AlreadyExists {
        path: String,
    },
    NotEmpty {
        path: String,
    },
    GrantRoot {
        path: String,
    },
    NotText {
        path: String,
        offset: u64,
    },
    SplitCharacter {
        path: String,
        offset: u64,
    },
    /// The range asked for holds only the start of one character.
    PartialCharacter {
        path: String,
        offset: u64,
    },
    OffsetPastEnd {
        path: String,
        offset: u64,
        size: u64,
    },
    TooLarge {
        what: &'static str,
        bytes: u64,
        limit: u64,
    },
    BadBase64 {
        reason: String,
    },
    /// The host refused the operation (a symbolic link leading out of the grant, or the
    /// host's own permissions).
    Denied {
        path: String,
    },
    Io {
        path: String,
        reason: String,
    },
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FileError::NoGrant => f.write_str(
                "no directory is granted to the file tools, so there are no files to work with; only the \
                 operator can grant one (`[grants] files` in the manifest file/file.toml of the stdlib)",
            ),
            FileError::Relative { path, granted } => {
                write!(f, "`{path}` is a relative path; give an absolute path inside a granted directory: {granted}")
            }
            FileError::Outside { path, granted } => {
                write!(f, "`{path}` is outside the granted directories, which are: {granted}")
            }
            FileError::ReadOnly { path, grant } => {
                write!(f, "`{path}` cannot be changed: `{grant}` is granted read-only")
            }
            FileError::NotFound { path } => write!(f, "`{path}` does not exist"),
            FileError::WrongKind { path, wanted, found } => write!(f, "`{path}` is a {found}, not a {wanted}"),
            FileError::AlreadyExists { path } => {
                write!(f, "`{path}` already exists; use mode \"overwrite\" or \"append\" to change it")
            }
            FileError::NotEmpty { path } => {
                write!(
                    f,
                    "`{path}` is a directory that is not empty; set recursive to true to delete it with its contents"
                )
            }
            FileError::GrantRoot { path } => {
                write!(f, "`{path}` is a granted directory itself; it can be emptied but not deleted")
            }
            FileError::NotText { path, offset } => write!(
                f,
                "`{path}` is not UTF-8 text (invalid byte at offset {offset}); read it with encoding \"base64\""
            ),
            FileError::SplitCharacter { path, offset } => write!(
                f,
                "offset {offset} of `{path}` falls inside a UTF-8 character; start at a character boundary or \
                 use encoding \"base64\""
            ),
            FileError::PartialCharacter { path, offset } => write!(
                f,
                "the bytes at offset {offset} of `{path}` are only part of a UTF-8 character; read a longer range"
            ),
            FileError::OffsetPastEnd { path, offset, size } => {
                write!(f, "offset {offset} is past the end of `{path}`, which is {size} bytes long")
            }
            FileError::TooLarge { what, bytes, limit } => {
                write!(f, "{what} is {bytes} bytes; the limit is {limit} bytes per call")
            }
            FileError::BadBase64 { reason } => write!(f, "content is not valid base64: {reason}"),
            FileError::Denied { path } => write!(
                f,
                "the host refused access to `{path}` (a symbolic link leading outside the granted directory, or \
                 permissions on the host)"
            ),
            FileError::Io { path, reason } => write!(f, "`{path}`: {reason}"),
        }
    }
}

impl FileError {
    /// Classifies an I/O error on `path`.
    pub fn io(path: &str, error: std::io::Error) -> FileError {
        let path = path.to_owned();
        match error.kind() {
            ErrorKind::NotFound => FileError::NotFound { path },
            ErrorKind::PermissionDenied => FileError::Denied { path },
            ErrorKind::AlreadyExists => FileError::AlreadyExists { path },
            ErrorKind::DirectoryNotEmpty => FileError::NotEmpty { path },
            ErrorKind::IsADirectory => FileError::WrongKind { path, wanted: "file", found: "directory" },
            ErrorKind::NotADirectory => FileError::WrongKind { path, wanted: "directory", found: "file" },
            _ => FileError::Io { path, reason: error.to_string() },
        }
    }
}

impl From<FileError> for ToolError {
    fn from(error: FileError) -> ToolError {
        match error {
            // The operator's side: nothing the caller can change in its input fixes these.
            FileError::NoGrant | FileError::ReadOnly { .. } | FileError::Denied { .. } | FileError::Io { .. } => {
                ToolError::failed(error)
            }
            _ => ToolError::invalid_input(error),
        }
    }
}
