// What the document area says when a document is not simply fine: the page of a document that
// could not be opened as a model, and the banner above a document whose model has errors.
//
// Contract:
//  - failure_headline: "<title> is not a model file" (E_NOT_A_MODEL), "<title> was not found"
//    (E_NOT_FOUND), else "Could not open <title>".
//  - error_banner_text: empty for a model without errors; else "N error(s) · CODE: message" of
//    its first error (the truncation summary when the file was cut short; truncation.h).
//  - draw_failed_page returns true when the user asked to close the document.
//  - draw_error_banner draws the banner (with a button that brings the Diagnostics panel
//    forward) when error_banner_text is not empty, and returns the height it took (0 otherwise).
#pragma once

#include <string>

#include "state/document.h"

namespace mlens {

std::string failure_headline(const Document& doc);
std::string error_banner_text(const Model& model);

bool draw_failed_page(const Document& doc);
float draw_error_banner(Document& doc);

}  // namespace mlens
