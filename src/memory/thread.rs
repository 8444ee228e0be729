//! Thread extraction: Dify's newest-first walk and the true tree path.
