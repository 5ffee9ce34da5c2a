// The one browser launcher of every browser test lives in @portcullis/testing.
export { launchBrowser } from '@portcullis/testing/browser';
