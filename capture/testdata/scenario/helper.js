window.helper = {greet: name => 'hello ' + name};
//# sourceMappingURL=helper.js.map
