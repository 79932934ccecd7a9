/* api_getter.h: the API's getters, which take NULL and return a fallback for it, defined by one
 * macro so that the convention is written once. Internal to the library. */
#ifndef CUDAFFT_API_GETTER_H
#define CUDAFFT_API_GETTER_H

/* Defines `Type name(const Object *object)`: value (an expression of object) for an object,
 * fallback for NULL. */
#define CUDAFFT_DEFINE_GETTER(Type, name, Object, value, fallback)                                 \
  Type name(const Object *object)                                                                  \
  {                                                                                                \
    return object ? (value) : (fallback);                                                          \
  }

#endif
