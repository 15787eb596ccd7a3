// Image thumbnails for request-side slimming (py_src/panelot/request/thumbnails.py calls this).
// Decoding and encoding use the browser's own codecs: createImageBitmap, an
// OffscreenCanvas and convertToBlob. Works in pages and workers; needs no eval.

/** Thumbnails are JPEG (every provider accepts it); quality of the encoder. */
export const THUMBNAIL_MIME = "image/jpeg";
export const THUMBNAIL_QUALITY = 0.85;

/**
 * Scale an image Blob down so that its longest side is at most `maxDim` pixels
 * (smaller images keep their size) and encode it as JPEG on a white background.
 *
 * @param {Blob} blob the stored image
 * @param {number} maxDim longest side of the result, in pixels
 * @returns {Promise<{blob: Blob, width: number, height: number, sourceWidth: number, sourceHeight: number}>}
 */
export async function thumbnail(blob, maxDim) {
  const bitmap = await createImageBitmap(blob);
  try {
    const { width: sourceWidth, height: sourceHeight } = bitmap;
    const scale = Math.min(1, maxDim / Math.max(sourceWidth, sourceHeight));
    const width = Math.max(1, Math.round(sourceWidth * scale));
    const height = Math.max(1, Math.round(sourceHeight * scale));
    const canvas = new OffscreenCanvas(width, height);
    const ctx = canvas.getContext("2d");
    ctx.fillStyle = "#ffffff";
    ctx.fillRect(0, 0, width, height);
    ctx.imageSmoothingEnabled = true;
    ctx.imageSmoothingQuality = "high";
    ctx.drawImage(bitmap, 0, 0, width, height);
    const out = await canvas.convertToBlob({ type: THUMBNAIL_MIME, quality: THUMBNAIL_QUALITY });
    return { blob: out, width, height, sourceWidth, sourceHeight };
  } finally {
    bitmap.close();
  }
}
