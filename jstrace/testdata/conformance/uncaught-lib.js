function name(item) { return item.name.toUpperCase(); }
exports.load = function load(doc) { return doc.items.map((item) => name(item)); };
