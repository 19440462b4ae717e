//! What a ROS 2 bag directory's `metadata.yaml` lists, read as YAML.

use std::path::Path;

use yaml_rust2::YamlLoader;

/// The files `dir/metadata.yaml` lists (`relative_file_paths`), in order; panics when it
/// is missing or is not rosbag2's metadata.
pub fn bag_files(dir: &Path) -> Vec<String> {
    let path = dir.join("metadata.yaml");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let docs = YamlLoader::load_from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not YAML: {e}\n{text}", path.display()));
    let paths = &docs[0]["rosbag2_bagfile_information"]["relative_file_paths"];
    paths
        .as_vec()
        .unwrap_or_else(|| panic!("{} lists no relative_file_paths:\n{text}", path.display()))
        .iter()
        .map(|name| name.as_str().expect("a file name").to_string())
        .collect()
}
