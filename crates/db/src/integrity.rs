//! What `quick_check` does not see, checked before a results database is written: header
//! fields outside the values SQLite's file format allows (some make SQLite open the file
//! read-only or refuse it only at the first write), a file shorter than its header says, and a
//! schema that is not exactly the one storlab's migrations built (a table or index dropped, a
//! column added, renamed or dropped, an object added: SQL that `quick_check` finds sound, but
//! whose first write would fail half-way or do something else).

use crate::schema::{self, Migration};
use rusqlite::Connection;

// Header fields, from https://www.sqlite.org/fileformat2.html ("1.3. The Database Header").
/// File format write and read versions, 1 byte each: 1 (rollback journal) or 2 (WAL).
const WRITE_VERSION_OFFSET: usize = 18;
const READ_VERSION_OFFSET: usize = 19;
/// File change counter, 4 bytes: the in-header database size is valid when it equals the
/// version-valid-for number.
const CHANGE_COUNTER_OFFSET: usize = 24;
/// Size of the database in pages, 4 bytes.
const DATABASE_PAGES_OFFSET: usize = 28;
/// Schema format number, 4 bytes: 1 to 4 (0 in a database with no schema yet).
const SCHEMA_FORMAT_OFFSET: usize = 44;
/// Text encoding, 4 bytes: 1 (UTF-8), 2 (UTF-16le) or 3 (UTF-16be); 0 with no schema yet.
const TEXT_ENCODING_OFFSET: usize = 56;
/// Reserved for expansion, 20 bytes: "must be zero".
const RESERVED_RANGE: std::ops::Range<usize> = 72..92;
/// The version-valid-for number, 4 bytes.
const VERSION_VALID_FOR_OFFSET: usize = 92;

/// The page size and the file facts [`check_header`] reads besides the header.
pub(crate) struct FileShape {
    pub page_size_bytes: u32,
    pub len_bytes: u64,
    /// A `-wal` or `-journal` beside the file: its size may then be what the journal restores.
    pub journal_beside: bool,
    /// The header names storlab (`application_id`): a database with a schema.
    pub storlab: bool,
}

/// Why the 100-byte `header` of a file of `shape` is not a sound SQLite header, if it is not.
pub(crate) fn check_header(header: &[u8], shape: &FileShape) -> Option<String> {
    let be_u32 = |at: usize| u32::from_be_bytes(header[at..at + 4].try_into().expect("4 bytes"));
    for (at, name) in [
        (WRITE_VERSION_OFFSET, "write"),
        (READ_VERSION_OFFSET, "read"),
    ] {
        if !(1..=2).contains(&header[at]) {
            return Some(format!(
                "file format {name} version {} (1 or 2)",
                header[at]
            ));
        }
    }
    if header[RESERVED_RANGE].iter().any(|&byte| byte != 0) {
        return Some("the header's reserved bytes 72 to 91 are not zero".into());
    }
    let (schema_format, encoding) = (be_u32(SCHEMA_FORMAT_OFFSET), be_u32(TEXT_ENCODING_OFFSET));
    let no_schema_yet = !shape.storlab && schema_format == 0 && encoding == 0;
    let valid = (1..=4).contains(&schema_format) && (1..=3).contains(&encoding);
    if !(no_schema_yet || valid) {
        return Some(format!(
            "schema format {schema_format} (1 to 4), text encoding {encoding} (1 to 3)"
        ));
    }
    let page_bytes = u64::from(shape.page_size_bytes);
    if shape.journal_beside {
        return None;
    }
    if !shape.len_bytes.is_multiple_of(page_bytes) {
        return Some(format!(
            "truncated: {} bytes, not a whole number of {page_bytes}-byte pages",
            shape.len_bytes
        ));
    }
    let header_pages = u64::from(be_u32(DATABASE_PAGES_OFFSET));
    let size_valid = be_u32(CHANGE_COUNTER_OFFSET) == be_u32(VERSION_VALID_FOR_OFFSET);
    if size_valid && header_pages * page_bytes > shape.len_bytes {
        return Some(format!(
            "truncated: {} bytes, its header says {header_pages} pages of {page_bytes}",
            shape.len_bytes
        ));
    }
    None
}

/// One schema object as `sqlite_schema` lists it: type, name, table, SQL.
type SchemaObject = (String, String, String, Option<String>);

/// How the schema of `connection` differs from the one the first `version` `migrations`
/// build (in memory, here, to compare), if it does: the first object missing, changed or extra.
pub(crate) fn schema_difference(
    connection: &Connection,
    migrations: &[Migration],
    version: u32,
) -> rusqlite::Result<Option<String>> {
    let mut expected_db = Connection::open_in_memory()?;
    let transaction = expected_db.transaction()?;
    schema::apply(&transaction, &migrations[..version as usize], 0, "")?;
    transaction.commit()?;
    let expected = schema_objects(&expected_db)?;
    let found = schema_objects(connection)?;
    for object in &expected {
        let same_name = found.iter().find(|f| f.0 == object.0 && f.1 == object.1);
        match same_name {
            None => return Ok(Some(format!("{} {} is missing", object.0, object.1))),
            Some(f) if f != object => {
                return Ok(Some(format!("{} {} was altered", object.0, object.1)))
            }
            Some(_) => {}
        }
    }
    Ok(found
        .iter()
        .find(|f| !expected.contains(f))
        .map(|extra| format!("{} {} is not storlab's", extra.0, extra.1)))
}

fn schema_objects(connection: &Connection) -> rusqlite::Result<Vec<SchemaObject>> {
    let mut statement = connection
        .prepare("SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY type, name")?;
    let rows = statement.query_map([], |row| {
        Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
    })?;
    rows.collect()
}
