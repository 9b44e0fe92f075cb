// The saved widget state of the notebook pages: require.js finds anywidget's module on
// this site (the html-manager asks for it by name before any CDN; its CDN is pointed at
// a folder of this site that does not exist, so nothing is ever fetched elsewhere).
(function () {
  var here = document.currentScript.src;
  window.requirejs.config({
    paths: { anywidget: new URL("vendor/anywidget/index", here).href },
  });
})();
