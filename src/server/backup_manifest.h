// MANIFEST.json of a backup dir (backup.h): encoded and decoded here only, so `admin backup` and
// `admin restore` read the same format; backup_test round-trips it.
#pragma once

#include <filesystem>
#include <string>

#include "common/status.h"
#include "server/backup.h"

namespace trainyard::server {

inline constexpr char kManifestFormat[] = "trainyard-backup";
inline constexpr int kManifestFormatVersion = 1;

// The manifest as JSON text (pretty-printed: operators read it).
std::string EncodeManifest(const BackupManifest& manifest);

// FAILED_PRECONDITION naming `where` and the field when the text is not a manifest of a format
// version this binary reads.
StatusOr<BackupManifest> DecodeManifest(const std::string& text, const std::string& where);

// The facts of the database file `path` a manifest records: its schema version (PRAGMA
// user_version), size and every table's row count. Opened read-only. UNAVAILABLE naming the path.
StatusOr<BackupDatabase> ReadDatabaseFacts(const std::filesystem::path& path);

}  // namespace trainyard::server
